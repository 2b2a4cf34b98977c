/**
 * Decorator arguments from configuration: given as functions of the instance, they are resolved
 * (and checked) when the application starts, from the services the class injects — not when the
 * class is defined.
 */
import { Injectable } from '@nestjs/common';
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { acquire, LockTimeoutError } from '@zkrx/lock';
import { childrenOf, connectedClient, lockPath } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { startApp } from '../../test/nest-apps';
import { LeaderOnly, LeaderService, Locked } from '../index';

/** What a configuration module provides (ConfigService, say). */
class Settings {
  constructor(
    readonly election: string,
    readonly lock: string,
    readonly lockTimeoutMs: number,
  ) {}
}

@Injectable()
class Reports {
  constructor(readonly settings: Settings) {}

  @LeaderOnly((self: Reports) => self.settings.election)
  report(): string {
    return 'reported';
  }

  // The path is a function of the call's arguments, the instance its `this`; the options a
  // function of the instance, resolved at start.
  @Locked(
    function (this: Reports) {
      return this.settings.lock;
    },
    (self: Reports) => ({ timeoutMs: self.settings.lockTimeoutMs }),
  )
  async rebuild(): Promise<string> {
    return 'rebuilt';
  }
}

describe('decorator arguments from configuration', () => {
  it('are resolved when the application starts, from what the class injects', async () => {
    const settings = new Settings(lockPath('election'), lockPath('lock'), 50);
    const app = await startApp({
      providers: [Reports, { provide: Settings, useValue: settings }],
      zk: { id: 'configured' },
    });
    // Joined at boot, on the configured path.
    await app.get(LeaderService).whenLeader(settings.election);
    const watcher = await connectedClient();
    expect(await childrenOf(watcher, settings.election)).toHaveLength(1);
    expect(app.get(Reports).report()).toBe('reported');
    // The configured lock path and timeout.
    const holder = await acquire(watcher, settings.lock);
    await expect(app.get(Reports).rebuild()).rejects.toBeInstanceOf(LockTimeoutError);
    await holder.release();
  });

  it('a bad value fails the start, with the error that names it', async () => {
    const settings = new Settings('no-leading-slash', lockPath('lock'), 50);
    const started = startApp({ providers: [Reports, { provide: Settings, useValue: settings }] });
    await expect(started).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.InvalidPath),
    );
  });
});
