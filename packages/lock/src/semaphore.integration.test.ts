import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  sleep,
  untilEmpty,
  untilWatching,
} from '@zkrx/test-support';
import { testZooKeeper } from '@zkrx/testing';
import { defer, NEVER, Subject, takeUntil } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  acquireSemaphore,
  LockLostError,
  LockTimeoutError,
  semaphoreMutex,
  tryAcquireSemaphore,
  withSemaphore,
} from './index';

describe('semaphore', () => {
  it('lets `leases` of 12 sessions hold together, never more, and all of them in turn', async () => {
    const clients = await connectedClients(12);
    const path = lockPath('sem');
    const log = new IntervalLog(4);
    // Four hold at once: each stays until all four are in (with fewer slots they never would).
    let inside = 0;
    let allIn: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      allIn = resolve;
    });
    const firstFour = await Promise.all(
      clients.slice(0, 4).map(async (client, index) => {
        const lease = await acquireSemaphore(client, path, { leases: 4 });
        const record = log.enter(`first${index}`);
        inside += 1;
        if (inside === 4) allIn();
        await together;
        log.exit(record);
        return lease;
      }),
    );
    expect(log.maxInside).toBe(4);
    for (const lease of firstFour) await lease.release();
    // Then all twelve, ten times each: never more than four inside.
    await Promise.all(
      clients.map(async (client, index) => {
        for (let round = 0; round < 10; round++) {
          const lease = await acquireSemaphore(client, path, { leases: 4 });
          const record = log.enter(`c${index}`);
          await new Promise((resolve) => setImmediate(resolve));
          log.exit(record);
          await lease.release();
        }
      }),
    );
    expect(log.violations).toEqual([]);
    expect(log.holds).toHaveLength(124);
    // Every release was awaited: each lease was gone before its holder went on. The takers'
    // gate nodes go in the background (each removed as its lease is taken).
    expect(await childrenOf(clients[0]!, `${path}/leases`)).toEqual([]);
    await untilEmpty(clients[0]!, `${path}/locks`);
  });

  it("uses Curator's InterProcessSemaphoreV2 layout", async () => {
    const client = await connectedClient();
    const path = lockPath('sem');
    const lease = await acquireSemaphore(client, path, { leases: 2 });
    const [name] = await childrenOf(client, `${path}/leases`);
    expect(name).toMatch(/^_c_[0-9a-f-]{36}-lease-\d{10}$/);
    expect(lease.node).toBe(`${path}/leases/${name}`);
    await lease.release();
  });

  it('times out when every lease is taken, leaving nothing behind', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('sem');
    const lease = await acquireSemaphore(a!, path, { leases: 1 });
    const error = await acquireSemaphore(b!, path, { leases: 1, timeoutMs: 250 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockTimeoutError);
    // b's nodes go in the background (deletes sent as the call rejects); a's listings, on
    // another session, may be answered before the server applies them.
    await vi.waitUntil(
      async () =>
        (await childrenOf(a!, `${path}/locks`)).length === 0 &&
        (await childrenOf(a!, `${path}/leases`)).length === 1,
    );
    await lease.release();
  });

  it('semaphoreMutex can be released from anywhere and is not re-entrant', async () => {
    const client = await connectedClient();
    const path = lockPath('semmutex');
    const leases: string[] = [];
    const first = semaphoreMutex(client, path).subscribe((lease) => leases.push(lease.node));
    await vi.waitUntil(() => leases.length === 1);
    const second = semaphoreMutex(client, path).subscribe((lease) => leases.push(lease.node));
    await sleep(100);
    expect(leases).toHaveLength(1);
    first.unsubscribe();
    await vi.waitUntil(() => leases.length === 2);
    second.unsubscribe();
  });

  it('tryAcquireSemaphore takes a free slot at once, and answers null without waiting when every slot is taken', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('sem');
    const first = await tryAcquireSemaphore(a!, path, { leases: 2 });
    // The first taker's gate node goes without being waited for (its delete from a's session
    // may be applied after b's join): a try that meets it answers null, as documented. Wait for
    // the gate to be free, so the try below meets only the leases.
    await vi.waitUntil(async () => (await childrenOf(a!, `${path}/locks`)).length === 0);
    const second = await tryAcquireSemaphore(b!, path, { leases: 2 });
    expect(first?.isHeld).toBe(true);
    expect(second?.isHeld).toBe(true);
    // The gate free again: the null below is the leases' answer, not a taker's at the gate.
    await vi.waitUntil(async () => (await childrenOf(a!, `${path}/locks`)).length === 0);
    expect(await tryAcquireSemaphore(b!, path, { leases: 2 })).toBeNull();
    // The try that found every slot taken left nothing behind: two leases, no taker at the gate.
    expect(await childrenOf(a!, `${path}/leases`)).toHaveLength(2);
    await vi.waitUntil(async () => (await childrenOf(a!, `${path}/locks`)).length === 0);
    await first!.release();
    const third = await tryAcquireSemaphore(b!, path, { leases: 2 });
    expect(third?.isHeld).toBe(true);
    await second!.release();
    await third!.release();
  });

  it('withSemaphore runs the source only while holding a slot, and stops it when the slot is lost', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('sem');
    const taken = await acquireSemaphore(a!, path, { leases: 1 });
    let started = false;
    const stop = new Subject<void>();
    const errors: unknown[] = [];
    defer(() => {
      started = true;
      return NEVER;
    })
      .pipe(withSemaphore(b!, path, { leases: 1 }), takeUntil(stop))
      .subscribe({ error: (error: unknown) => errors.push(error) });
    // b waits at the gate's lease count while a holds the one slot.
    await vi.waitUntil(async () => (await childrenOf(a!, `${path}/leases`)).length === 2);
    expect(started).toBe(false);
    await taken.release();
    await vi.waitUntil(() => started);
    // The slot's node deleted by someone else: the source is stopped with LockLostError.
    const [node] = await childrenOf(a!, `${path}/leases`);
    await a!.promises.delete(`${path}/leases/${node}`);
    await vi.waitUntil(() => errors.length === 1);
    expect(errors[0]).toBeInstanceOf(LockLostError);
    stop.next();
    expect(await childrenOf(a!, `${path}/leases`)).toEqual([]);
  });

  it('rejects leases < 1 before creating anything', async () => {
    const client = await connectedClient();
    const path = lockPath('sem');
    for (const leases of [0, -1, 1.5, Number.NaN]) {
      await expect(acquireSemaphore(client, path, { leases })).rejects.toMatchObject({
        code: 'BadArguments',
      });
      await expect(tryAcquireSemaphore(client, path, { leases })).rejects.toMatchObject({
        code: 'BadArguments',
      });
    }
    expect(await client.promises.exists(path)).toBeNull();
  });

  it('takes its lease with its turn at the gate most likely next, and gives it up when it leaves before holding: never more than `leases`, nothing left', async () => {
    const server = await testZooKeeper();
    const [a, b, c, observer] = await connectedClients(4);
    const path = lockPath('sem');
    const leases = `${path}/leases`;
    const locks = `${path}/locks`;
    const held = await acquireSemaphore(a!, path, { leases: 1 });
    // c holds the gate, counting the leases (one, taken): it waits for them to change.
    const cGivesUp = new AbortController();
    const cWaits = acquireSemaphore(c!, path, { leases: 1, signal: cGivesUp.signal });
    await vi.waitUntil(async () => (await childrenOf(observer!, leases)).length === 2);
    const [cGate] = await childrenOf(observer!, locks);
    // b waits at the gate, right behind c.
    const bGivesUp = new AbortController();
    const bWaits = acquireSemaphore(b!, path, { leases: 1, signal: bGivesUp.signal });
    await untilWatching(server, b!, `${locks}/${cGate}`);
    cGivesUp.abort();
    await expect(cWaits).rejects.toBeDefined();
    // b's turn at the gate was next: its lease went in with its gate listing, and waits (one
    // lease, taken).
    await vi.waitUntil(async () => (await childrenOf(observer!, leases)).length === 2);
    expect(held.isHeld).toBe(true);
    bGivesUp.abort();
    await expect(bWaits).rejects.toBeDefined();
    await vi.waitUntil(async () => (await childrenOf(observer!, locks)).length === 0);
    await vi.waitUntil(async () => (await childrenOf(observer!, leases)).length === 1);
    await held.release();
    expect(await childrenOf(observer!, leases)).toEqual([]);
  });
});
