import 'reflect-metadata';
import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Cron, Interval } from '@nestjs/schedule';
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LeaderOnly, Locked } from '../index';

const reflector = new Reflector();

class Jobs {
  @Cron('* * * * * *', { name: 'locked-then-cron' })
  @Locked('/locks/a')
  async cronOutside(): Promise<void> {}

  @Locked('/locks/a')
  @Cron('* * * * * *', { name: 'cron-then-locked' })
  async cronInside(): Promise<void> {}

  @Interval('leader-then-interval', 1_000)
  @LeaderOnly('/election/a')
  intervalOutside(): void {}

  @LeaderOnly('/election/a')
  @Interval('interval-then-leader', 1_000)
  intervalInside(): void {}

  @SetMetadata('role', 'admin')
  @Locked('/locks/a')
  @LeaderOnly('/election/a')
  @SetMetadata('audit', true)
  async stacked(): Promise<void> {}
}

describe('method decoration', () => {
  it('keeps the metadata of decorators written before or after, and the name', () => {
    const prototype = Jobs.prototype;
    for (const key of ['cronOutside', 'cronInside', 'intervalOutside', 'intervalInside'] as const) {
      // What @nestjs/schedule's explorer reads: its metadata on the method it finds.
      expect(Reflect.getMetadataKeys(prototype[key])).toEqual(
        expect.arrayContaining(['SCHEDULER_NAME', 'SCHEDULER_TYPE']),
      );
      expect(prototype[key].name).toBe(key);
    }
    expect(reflector.get('SCHEDULER_NAME', prototype.cronOutside)).toBe('locked-then-cron');
    expect(reflector.get('SCHEDULER_NAME', prototype.cronInside)).toBe('cron-then-locked');
    expect(reflector.get('SCHEDULER_NAME', prototype.intervalInside)).toBe('interval-then-leader');
    expect(reflector.get('role', prototype.stacked)).toBe('admin');
    expect(reflector.get('audit', prototype.stacked)).toBe(true);
  });

  it('checks its arguments where the decorator is written', () => {
    const rejects = (make: () => unknown, code: ZkErrorCode) => {
      const error = (() => {
        try {
          make();
        } catch (caught) {
          return caught;
        }
      })();
      expect(isZkError(error, code)).toBe(true);
    };
    rejects(() => Locked('relative'), ZkErrorCode.InvalidPath);
    rejects(() => Locked('/'), ZkErrorCode.InvalidPath);
    rejects(() => Locked('/a', { mode: 'later' as 'wait' }), ZkErrorCode.BadArguments);
    rejects(() => Locked('/a', { timeoutMs: -1 }), ZkErrorCode.BadArguments);
    rejects(() => Locked('/a', { mode: 'skip', timeoutMs: 10 }), ZkErrorCode.BadArguments);
    rejects(() => Locked(42 as unknown as string), ZkErrorCode.BadArguments);
    rejects(() => LeaderOnly('no-slash'), ZkErrorCode.InvalidPath);
    rejects(
      () => Locked('/a')(Jobs, 'static', { value: () => undefined }),
      ZkErrorCode.BadArguments,
    );
  });

  it('types: a method returning a plain value must say it returns a Promise', () => {
    class Typed {
      @Locked('/locks/a')
      fire(): void {}

      @Locked('/locks/a')
      async value(): Promise<number> {
        return 1;
      }

      @Locked('/locks/a')
      stream(): Observable<number> {
        return new Observable<number>();
      }

      // @ts-expect-error: the wrapper returns a Promise, not a number
      @Locked('/locks/a')
      plain(): number {
        return 1;
      }
    }
    expect(Typed).toBeTypeOf('function');
  });
});
