/**
 * `currentLock()` and `leaderSignal()` follow the method's async context wherever its work goes
 * on: after awaits, in timers, ticks and microtasks, in RxJS pipelines, after a ZooKeeper reply,
 * across `Promise.all`, into nested @Locked methods — and nowhere else. They rest on
 * AsyncLocalStorage, which Node 22 builds on async_hooks and Node 24 and 26 on AsyncContextFrame
 * (V8's continuation-preserved data): a different model of the same promise. This file runs on
 * every Node line (`test:lines`).
 */
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { deferred, lockPath } from '@zkrx/test-support';
import { firstValueFrom, from, map, mergeMap, timer } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { clientOf, startApp } from '../test/nest-apps';
import { currentLock, LeaderOnly, LeaderService, Locked, leaderSignal, lockSignal } from './index';

/** What `read()` gives at every kind of continuation of one async function, by name. */
async function everywhere<T>(read: () => T, zkCall: () => Promise<unknown>) {
  const seen: Record<string, T> = { sync: read() };
  await Promise.resolve();
  seen.afterAwait = read();
  await sleep(1);
  seen.afterTimer = read();
  seen.setTimeout = await new Promise<T>((resolve) => setTimeout(() => resolve(read()), 1));
  seen.setImmediate = await new Promise<T>((resolve) => setImmediate(() => resolve(read())));
  seen.nextTick = await new Promise<T>((resolve) => process.nextTick(() => resolve(read())));
  seen.queueMicrotask = await new Promise<T>((resolve) => queueMicrotask(() => resolve(read())));
  seen.promiseThen = await Promise.resolve().then(read);
  await zkCall();
  seen.afterZooKeeperReply = read();
  const [left, right] = await Promise.all([
    sleep(2).then(read),
    (async () => {
      await sleep(1);
      return read();
    })(),
  ]);
  seen.promiseAllLeft = left;
  seen.promiseAllRight = right;
  seen.rxjsTimer = await firstValueFrom(timer(1).pipe(map(read)));
  seen.rxjsFromPromise = await firstValueFrom(
    from(sleep(1)).pipe(mergeMap(() => from(Promise.resolve().then(read)))),
  );
  // An emitter's listener runs in the context of its emit: emitted here, it is ours.
  const emitter = new EventEmitter();
  const heard = new Promise<T>((resolve) => emitter.once('tick', () => resolve(read())));
  setTimeout(() => emitter.emit('tick'), 1);
  seen.emitterEmittedInside = await heard;
  return seen;
}

function services(lockAt: string, innerAt: string, electionAt: string) {
  @Injectable()
  class Orders {
    /** Released when the test lets the late timer run (after the method returned). */
    late: Promise<{ path: string | undefined; aborted: boolean | undefined }> | undefined;

    @Locked(lockAt)
    async pay(zkCall: () => Promise<unknown>, outside: Promise<void>) {
      const seen = await everywhere(() => currentLock()?.path, zkCall);
      // A promise made and settled outside the method: its continuation is the method's.
      await outside;
      seen.afterOutsidePromise = currentLock()?.path;
      const inner = await this.refund();
      seen.afterNested = currentLock()?.path;
      const gate = deferred<{ path: string | undefined; aborted: boolean | undefined }>();
      this.late = gate.promise;
      setTimeout(
        () => gate.resolve({ path: currentLock()?.path, aborted: lockSignal()?.aborted }),
        20,
      );
      return { seen, inner };
    }

    @Locked(innerAt)
    async refund() {
      await sleep(1);
      return currentLock()?.path;
    }
  }

  @Injectable()
  class Billing {
    @LeaderOnly(electionAt)
    async charge(zkCall: () => Promise<unknown>) {
      const signal = leaderSignal();
      const seen = await everywhere(
        () => leaderSignal() === signal && signal !== undefined,
        zkCall,
      );
      return seen;
    }
  }
  return { Orders, Billing };
}

describe('the async context of @Locked and @LeaderOnly methods', () => {
  it(`currentLock() is the method's lock at every continuation, and only there (Node ${process.versions.node})`, async () => {
    const [lockAt, innerAt, electionAt] = [lockPath('ctx'), lockPath('ctx'), lockPath('ctx')];
    const { Orders, Billing } = services(lockAt, innerAt, electionAt);
    const app = await startApp({ providers: [Orders, Billing] });
    const client = clientOf(app);
    const orders = app.get(Orders);
    // A callback scheduled outside, firing while the method runs: not in its context.
    const outsideGate = deferred();
    const outsideSaw = new Promise<string | undefined>((resolve) =>
      setTimeout(() => {
        resolve(currentLock()?.path);
        outsideGate.resolve();
      }, 5),
    );

    const { seen, inner } = await orders.pay(
      () => client.promises.exists('/'),
      outsideGate.promise,
    );

    for (const [where, path] of Object.entries(seen))
      expect({ where, path }).toEqual({ where, path: lockAt });
    expect(inner).toBe(innerAt);
    expect(await outsideSaw).toBeUndefined();
    expect(currentLock()).toBeUndefined();
    // A timer the method left behind still sees its lock, released: its signal aborted.
    expect(await orders.late).toEqual({ path: lockAt, aborted: true });
  });

  it('two calls at once each see their own lock', async () => {
    const [lockAt, innerAt, electionAt] = [lockPath('ctx'), lockPath('ctx'), lockPath('ctx')];
    const first = services(lockAt, innerAt, electionAt);
    const second = services(lockPath('ctx'), lockPath('ctx'), lockPath('ctx'));
    const app = await startApp({ providers: [first.Orders, second.Orders] });
    const client = clientOf(app);
    const never = Promise.resolve();
    const [a, b] = await Promise.all([
      app.get(first.Orders).pay(() => client.promises.exists('/'), never),
      app.get(second.Orders).pay(() => client.promises.exists('/'), never),
    ]);
    expect(new Set(Object.values(a.seen))).toEqual(new Set([lockAt]));
    expect(new Set(Object.values(b.seen)).size).toBe(1);
    expect(Object.values(b.seen)[0]).not.toBe(lockAt);
  });

  it("leaderSignal() is the term's signal at every continuation of a @LeaderOnly run", async () => {
    const electionAt = lockPath('ctx');
    const { Billing } = services(lockPath('ctx'), lockPath('ctx'), electionAt);
    const app = await startApp({ providers: [Billing] });
    await vi.waitUntil(() => app.get(LeaderService).isLeader(electionAt));
    const client = clientOf(app);
    const seen = await app.get(Billing).charge(() => client.promises.exists('/'));
    expect(seen).toBeDefined();
    for (const [where, same] of Object.entries(seen ?? {}))
      expect({ where, same }).toEqual({ where, same: true });
    expect(leaderSignal()).toBeUndefined();
  });
});
