import { Injectable } from '@nestjs/common';
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { LockLostError, LockTimeoutError } from '@zkrx/lock';
import { LockUpgradeError } from '@zkrx/rwlock';
import {
  childrenOf,
  connectedClient,
  deferred,
  IntervalLog,
  lockPath,
  sleep,
  untilEmpty,
} from '@zkrx/test-support';
import { expireSession } from '@zkrx/testing';
import { firstValueFrom, Observable, Subject, take, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { clientOf, closeApp, startApp, startApps } from '../../test/nest-apps';
import { currentLock, Locked, lockSignal } from '../index';

/** A service whose @Locked methods all guard `path` (classes are made per test: paths differ). */
function ledgerService(path: string, log: IntervalLog) {
  @Injectable()
  class Ledger {
    readonly seen: string[] = [];

    @Locked(path)
    async post(who: string, ms: number): Promise<number> {
      const token = currentLock()?.fencingToken ?? -1;
      const record = log.enter(who, token);
      await sleep(ms);
      log.exit(record);
      return token;
    }

    @Locked(path, { mode: 'skip' })
    async postIfFree(who: string, ms: number): Promise<string> {
      const record = log.enter(who);
      await sleep(ms);
      log.exit(record);
      return `${who} ran`;
    }

    @Locked(path, { timeoutMs: 300 })
    async postWithin(): Promise<string> {
      return 'posted';
    }

    /** Holds the lock until its signal aborts, then rejects with the abort reason. */
    @Locked(path)
    async holdUntilAborted(who: string): Promise<void> {
      const signal = lockSignal() as AbortSignal;
      const record = log.enter(who);
      try {
        await new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
      } finally {
        this.seen.push(`${who} aborted: ${(signal.reason as Error).name}`);
        log.exit(record);
      }
    }

    /** Ignores its signal: sleeps `ms` (or until `wake` resolves) whatever happens. */
    @Locked(path)
    async sleepThrough(ms: number, wake?: Promise<unknown>): Promise<string> {
      this.seen.push('sleeping');
      const record = log.enter('sleeper');
      await (wake ?? sleep(ms));
      log.exit(record);
      return 'woke';
    }

    @Locked(path)
    async outer(depth: number): Promise<string> {
      const token = currentLock()?.fencingToken;
      const inner = depth > 0 ? await this.outer(depth - 1) : await this.inner();
      return `outer(${inner})@${token === currentLock()?.fencingToken}`;
    }

    @Locked(path, { mode: 'skip' })
    async inner(): Promise<string> {
      return 'inner';
    }

    /** Emits `count` values `ms` apart while holding the lock. */
    @Locked(path)
    ticks(who: string, count: number, ms: number): Observable<number> {
      return new Observable<number>((subscriber) => {
        const record = log.enter(who, currentLock()?.fencingToken);
        let sent = 0;
        const timer = setInterval(() => {
          subscriber.next(sent++);
          if (sent === count) subscriber.complete();
        }, ms);
        return () => {
          clearInterval(timer);
          log.exit(record);
        };
      });
    }

    @Locked(path)
    compute(value: number): void {
      this.seen.push(`computed ${value}`);
      return (value * 2) as unknown as undefined;
    }

    // No return type written: @Locked cannot tell it returns an Observable.
    @Locked(path)
    undeclared() {
      return new Observable<number>((subscriber) => subscriber.next(1));
    }

    @Locked(path, { returns: 'observable' })
    declaredByOption() {
      return new Observable<number>((subscriber) => {
        subscriber.next(1);
        subscriber.complete();
      });
    }
  }
  return Ledger;
}

/** Read and write locks on one path. */
function catalogService(path: string, log: IntervalLog) {
  @Injectable()
  class Catalog {
    /** Reads for `ms` (or until `wake` resolves). */
    @Locked(path, { lock: 'read' })
    async read(who: string, ms: number, wake?: Promise<unknown>): Promise<void> {
      const record = log.enter(who);
      await (wake ?? sleep(ms));
      log.exit(record);
    }

    @Locked(path, { lock: 'write' })
    async write(who: string, ms: number): Promise<void> {
      const record = log.enter(`${who} (write)`);
      await sleep(ms);
      log.exit(record);
    }

    /** Reads while writing: the write lock downgrades. */
    @Locked(path, { lock: 'write' })
    async writeThenRead(): Promise<string> {
      await this.read('inner', 1);
      return 'downgraded';
    }

    /** Writes while reading: would wait on itself. */
    @Locked(path, { lock: 'read' })
    async readThenWrite(): Promise<void> {
      await this.write('inner', 1);
    }
  }
  return Catalog;
}

describe('@Locked', () => {
  it('concurrent calls on two applications never overlap, in fencing-token order', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const calls = [];
    for (let index = 0; index < 5; index++) {
      calls.push(a!.get(Ledger).post(`a${index}`, 20));
      calls.push(b!.get(Ledger).post(`b${index}`, 20));
    }
    const tokens = await Promise.all(calls);
    expect(log.violations).toEqual([]);
    expect(log.maxInside).toBe(1);
    expect(log.holds).toHaveLength(10);
    const inOrder = log.holds.map((hold) => hold.token);
    expect(inOrder).toEqual([...inOrder].sort((x, y) => x - y));
    expect(new Set(tokens).size).toBe(10);
    // b's last release finishes in the background: a's listing may come first.
    await untilEmpty(clientOf(a!), path);
  });

  it("mode 'skip' resolves undefined without running while another application holds the lock", async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const holding = a!.get(Ledger).post('a', 300);
    await vi.waitUntil(() => log.holds.length === 1);
    await expect(b!.get(Ledger).postIfFree('b', 10)).resolves.toBeUndefined();
    expect(log.holds.map((hold) => hold.who)).toEqual(['a']);
    await holding;
    // The release follows the method's result by a round trip: wait for a's node to go.
    await untilEmpty(clientOf(a!), path);
    await expect(b!.get(Ledger).postIfFree('b', 10)).resolves.toBe('b ran');
    expect(log.violations).toEqual([]);
  });

  it('rejects LockTimeoutError after timeoutMs, leaving no node', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const holding = a!.get(Ledger).post('a', 800);
    await vi.waitUntil(() => log.holds.length === 1);
    const error = await b!
      .get(Ledger)
      .postWithin()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ path });
    expect((error as LockTimeoutError).waitedMs).toBeGreaterThanOrEqual(300);
    // b's node goes in the background; a's listing, on another session, may come first.
    await vi.waitUntil(async () => (await childrenOf(clientOf(a!), path)).length === 1);
    await holding;
    await expect(b!.get(Ledger).postWithin()).resolves.toBe('posted');
  });

  it('is re-entrant: @Locked methods calling @Locked methods on the same path do not wait on themselves', async () => {
    const path = lockPath();
    const Ledger = ledgerService(path, new IntervalLog(1));
    const app = await startApp({ providers: [Ledger] });
    // outer → outer → outer → inner: four nested holds of one lock, one node, one token;
    // inner is mode 'skip': re-entering counts as free.
    await expect(app.get(Ledger).outer(2)).resolves.toBe(
      'outer(outer(outer(inner)@true)@true)@true',
    );
    expect(await childrenOf(clientOf(app), path)).toEqual([]);
  });

  it('holds the lock of an Observable method until it completes, and releases on unsubscribe', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const first = firstValueFrom(a!.get(Ledger).ticks('a', 5, 40).pipe(toArray()));
    await vi.waitUntil(() => log.holds.length === 1);
    const second = firstValueFrom(b!.get(Ledger).ticks('b', 2, 10).pipe(toArray()));
    await expect(first).resolves.toEqual([0, 1, 2, 3, 4]);
    await expect(second).resolves.toEqual([0, 1]);
    expect(log.violations).toEqual([]);
    expect(log.holds.map((hold) => hold.who)).toEqual(['a', 'b']);

    // take(2) unsubscribes an endless one: the lock is free again.
    await firstValueFrom(a!.get(Ledger).ticks('a', 1000, 10).pipe(take(2), toArray()));
    await expect(b!.get(Ledger).post('b', 1)).resolves.toBeGreaterThan(0);
    expect(log.violations).toEqual([]);
    await vi.waitUntil(async () => (await childrenOf(clientOf(a!), path)).length === 0);
  });

  it('a plain-value method returns a Promise of its value, run under the lock', async () => {
    const path = lockPath();
    const Ledger = ledgerService(path, new IntervalLog(1));
    const app = await startApp({ providers: [Ledger] });
    const ledger = app.get(Ledger);
    await expect(ledger.compute(21) as unknown as Promise<number>).resolves.toBe(42);
    expect(ledger.seen).toEqual(['computed 21']);
  });

  it('an Observable method whose return type is not declared fails loudly; returns: observable fixes it', async () => {
    const path = lockPath();
    const Ledger = ledgerService(path, new IntervalLog(1));
    const app = await startApp({ providers: [Ledger] });
    const error = await (app.get(Ledger).undeclared() as unknown as Promise<unknown>).catch(
      (caught: unknown) => caught,
    );
    expect(isZkError(error, ZkErrorCode.BadArguments)).toBe(true);
    expect((error as Error).message).toContain("returns: 'observable'");
    await expect(firstValueFrom(app.get(Ledger).declaredByOption())).resolves.toBe(1);
    expect(await childrenOf(clientOf(app), path)).toEqual([]);
  });

  it('read locks are shared across applications; the write lock excludes them', async () => {
    const path = lockPath();
    const log = new IntervalLog(2);
    const Catalog = catalogService(path, log);
    const [a, b] = await startApps(2, { providers: [Catalog] });
    // Both readers in at once, then a writer queued behind them, then the readers finish.
    const wake = deferred();
    const reads = [
      a!.get(Catalog).read('a', 0, wake.promise),
      b!.get(Catalog).read('b', 0, wake.promise),
    ];
    await vi.waitUntil(() => log.holds.length === 2);
    expect(log.maxInside).toBe(2);
    const writing = a!.get(Catalog).write('a', 20);
    await vi.waitUntil(async () => (await childrenOf(clientOf(a!), path)).length === 3);
    expect(log.holds).toHaveLength(2);
    wake.resolve();
    await Promise.all([...reads, writing]);
    expect(log.maxInside).toBe(2);
    const write = log.holds.find((hold) => hold.who === 'a (write)')!;
    for (const hold of log.holds.filter((other) => other !== write)) {
      expect(hold.end <= write.start || hold.start >= write.end).toBe(true);
    }
  });

  it('read and write locks re-enter: write then read downgrades, read then write is refused', async () => {
    const path = lockPath();
    const Catalog = catalogService(path, new IntervalLog(2));
    const app = await startApp({ providers: [Catalog] });
    await expect(app.get(Catalog).writeThenRead()).resolves.toBe('downgraded');
    await expect(app.get(Catalog).readThenWrite()).rejects.toBeInstanceOf(LockUpgradeError);
    expect(await childrenOf(clientOf(app), path)).toEqual([]);
  });

  it('session expiry aborts the signal and rejects LockLostError; the other application takes over', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const holding = a!
      .get(Ledger)
      .holdUntilAborted('a')
      .catch((caught: unknown) => caught);
    await vi.waitUntil(() => log.holds.length === 1);
    const waiting = b!.get(Ledger).post('b', 1);
    await expireSession(clientOf(a!));
    const error = await holding;
    expect(error).toBeInstanceOf(LockLostError);
    // The server drops the expired session's connection: the client is suspended first, which
    // ends the lock under the default policy; either way the lock is gone.
    expect(error).toMatchObject({ path });
    expect(['suspended', 'session-expired']).toContain((error as LockLostError).reason);
    expect(a!.get(Ledger).seen).toEqual(['a aborted: LockLostError']);
    await expect(waiting).resolves.toBeGreaterThan(0);
    expect(log.violations).toEqual([]);
  });

  it('rejects at once on loss even when the method ignores its signal', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const app = await startApp({ providers: [Ledger] });
    // The method sleeps until the test wakes it, after the call has settled.
    const wake = deferred();
    let stillSleeping = false;
    const call = app
      .get(Ledger)
      .sleepThrough(0, wake.promise)
      .catch((caught: unknown) => {
        stillSleeping = log.holds.length === 1 && Number.isNaN(log.holds[0]!.end);
        return caught;
      });
    await vi.waitUntil(() => app.get(Ledger).seen.length === 1);
    await expireSession(clientOf(app));
    expect(await call).toBeInstanceOf(LockLostError);
    // Rejected while the method was still running: it did not wait for the method to return.
    expect(stillSleeping).toBe(true);
    wake.resolve();
  });

  it('an Observable method errors LockLostError when the lock is lost', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const app = await startApp({ providers: [Ledger] });
    const errors = new Subject<unknown>();
    const failed = firstValueFrom(errors);
    app
      .get(Ledger)
      .ticks('a', 1000, 20)
      .subscribe({ error: (error: unknown) => errors.next(error) });
    await vi.waitUntil(() => log.holds.length === 1);
    await expireSession(clientOf(app));
    expect(await failed).toBeInstanceOf(LockLostError);
    expect(log.holds[0]!.end).not.toBeNaN();
  });

  it("closing the application's own client mid-run rejects LockLostError", async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const client = await connectedClient();
    const app = await startApp({ providers: [Ledger], zk: { client } });
    const holding = app
      .get(Ledger)
      .holdUntilAborted('a')
      .catch((caught: unknown) => caught);
    await vi.waitUntil(() => log.holds.length === 1);
    await client.close();
    expect(await holding).toBeInstanceOf(LockLostError);
    expect(app.get(Ledger).seen).toEqual(['a aborted: LockLostError']);
  });

  it('application shutdown asks running methods to finish and releases each lock as its method returns', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const holding = a!
      .get(Ledger)
      .holdUntilAborted('a')
      .catch((caught: unknown) => caught);
    await vi.waitUntil(() => log.holds.length === 1);
    const waiting = b!.get(Ledger).post('b', 1);
    await vi.waitUntil(async () => (await childrenOf(clientOf(b!), path)).length === 2);
    await closeApp(a!);
    // The signal said "shutting down" while the lock was still held: the method stopped itself.
    expect(isZkError(await holding, ZkErrorCode.ClientClosed)).toBe(true);
    expect(a!.get(Ledger).seen).toEqual(['a aborted: ZkError']);
    await waiting;
    expect(log.holds.map((hold) => hold.who)).toEqual(['a', 'b']);
    expect(log.violations).toEqual([]);
    expect(await childrenOf(clientOf(b!), path)).toEqual([]);
  });

  it('application shutdown waits for a method that ignores its signal: nobody else gets in before it returns', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const sleeping = a!.get(Ledger).sleepThrough(400);
    await vi.waitUntil(() => log.holds.length === 1);
    const waiting = b!.get(Ledger).post('b', 1);
    await vi.waitUntil(async () => (await childrenOf(clientOf(b!), path)).length === 2);
    await closeApp(a!);
    await expect(sleeping).resolves.toBe('woke');
    await waiting;
    expect(log.holds.map((hold) => hold.who)).toEqual(['sleeper', 'b']);
    expect(log.violations).toEqual([]);
    // A call made once the shutdown began does not wait for the lock.
    const late = await a!
      .get(Ledger)
      .post('late', 1)
      .catch((caught: unknown) => caught);
    expect(isZkError(late, ZkErrorCode.ClientClosed)).toBe(true);
  });

  it('application shutdown ends a running Observable method before its lock is released', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const errors = new Subject<unknown>();
    const failed = firstValueFrom(errors);
    a!
      .get(Ledger)
      .ticks('a', 1000, 20)
      .subscribe({ error: (error: unknown) => errors.next(error) });
    await vi.waitUntil(() => log.holds.length === 1);
    const waiting = b!.get(Ledger).post('b', 1);
    await vi.waitUntil(async () => (await childrenOf(clientOf(b!), path)).length === 2);
    await closeApp(a!);
    expect(isZkError(await failed, ZkErrorCode.ClientClosed)).toBe(true);
    await waiting;
    expect(log.holds.map((hold) => hold.who)).toEqual(['a', 'b']);
    expect(log.violations).toEqual([]);
  });

  it('a call waiting for the lock when its application shuts down rejects ClientClosed, leaving no node', async () => {
    const path = lockPath();
    const log = new IntervalLog(1);
    const Ledger = ledgerService(path, log);
    const [a, b] = await startApps(2, { providers: [Ledger] });
    const holding = a!
      .get(Ledger)
      .holdUntilAborted('a')
      .catch((caught: unknown) => caught);
    await vi.waitUntil(() => log.holds.length === 1);
    const waiting = b!
      .get(Ledger)
      .post('b', 1)
      .catch((caught: unknown) => caught);
    await vi.waitUntil(async () => (await childrenOf(clientOf(a!), path)).length === 2);
    await closeApp(b!);
    expect(isZkError(await waiting, ZkErrorCode.ClientClosed)).toBe(true);
    expect(await childrenOf(clientOf(a!), path)).toHaveLength(1);
    expect(log.holds.map((hold) => hold.who)).toEqual(['a']);
    await closeApp(a!);
    expect(isZkError(await holding, ZkErrorCode.ClientClosed)).toBe(true);
  });

  it('a class Nest did not make says what is missing', async () => {
    const Ledger = ledgerService(lockPath(), new IntervalLog(1));
    const error = await new Ledger().post('x', 1).catch((caught: unknown) => caught);
    expect(isZkError(error, ZkErrorCode.BadArguments)).toBe(true);
    expect((error as Error).message).toContain('Ledger.post is @Locked');
  });
});
