import {
  childrenOf,
  configurationRead,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  readsConfigurationAtOnce,
  sleep,
} from '@zkrx/test-support';
import { expireSession, fourLetterWord, mntr, testZooKeeper } from '@zkrx/testing';
import { firstValueFrom, Observable } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  acquire,
  type Lease,
  LockLostError,
  LockTimeoutError,
  mutex,
  tryAcquire,
  withLock,
} from './index';

/**
 * Each session's last request xid (`lcxid` in the server's `cons`), by session id. A client
 * numbers its requests 1, 2, 3…, so the growth is the requests it made; pings (xid -2) and
 * notifications leave it alone.
 */
async function lastRequestXids(connectString: string): Promise<Map<string, number>> {
  const xids = new Map<string, number>();
  for (const match of (await fourLetterWord(connectString, 'cons')).matchAll(
    /sid=(0x[0-9a-f]+),.*?lcxid=(0x[0-9a-f]+)/g,
  ))
    xids.set(match[1]!, Number(match[2]));
  return xids;
}

/** Requests the sessions present in both snapshots made between them. */
function requestsBetween(before: Map<string, number>, after: Map<string, number>): number {
  let requests = 0;
  for (const [sid, xid] of after) requests += xid - (before.get(sid) ?? xid);
  return requests;
}

function holdWith(observable: Observable<Lease>) {
  const state = {
    lease: undefined as Lease | undefined,
    error: undefined as unknown,
    completed: false,
  };
  const subscription = observable.subscribe({
    next: (lease) => {
      state.lease = lease;
    },
    error: (error: unknown) => {
      state.error = error;
    },
    complete: () => {
      state.completed = true;
    },
  });
  return { state, subscription };
}

describe('mutex under failures', () => {
  it('signals LockLostError when the holder session expires, and the next waiter gets the lock', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const held = holdWith(mutex(a!, path));
    await vi.waitUntil(() => held.state.lease !== undefined);
    const first = held.state.lease!;
    const next = acquire(b!, path);
    await sleep(50);
    const started = performance.now();
    await expireSession(a!);
    await vi.waitUntil(() => held.state.error !== undefined, { timeout: 4_000 });
    const lostAfterMs = performance.now() - started;
    expect(held.state.error).toBeInstanceOf(LockLostError);
    expect(['session-expired', 'suspended']).toContain((held.state.error as LockLostError).reason);
    expect(first.signal.aborted).toBe(true);
    expect(first.isHeld).toBe(false);
    expect(lostAfterMs).toBeLessThan(a!.sessionTimeoutMs);
    const lease = await next;
    expect(lease.fencingToken).toBeGreaterThan(first.fencingToken);
    await lease.release();
  });

  it('by default treats a suspended connection as lost at once: the old holder stops before anyone else holds', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 3_000 });
    const b = await connectedClient();
    const path = lockPath();
    const times = { aLost: 0, bHeld: 0 };
    const work = new Observable<never>(() => () => {
      times.aLost = performance.now();
    });
    const errors: unknown[] = [];
    work.pipe(withLock(a, path)).subscribe({ error: (error: unknown) => errors.push(error) });
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 1);
    const next = acquire(b, path).then((lease) => {
      times.bHeld = performance.now();
      return lease;
    });
    proxy.refuse(true);
    proxy.cut();
    await vi.waitUntil(() => errors.length === 1);
    expect((errors[0] as LockLostError).reason).toBe('suspended');
    // a's session is still alive on the server, so b waits until it expires.
    const lease = await next;
    expect(times.aLost).toBeGreaterThan(0);
    expect(times.aLost).toBeLessThan(times.bHeld);
    await lease.release();
  });

  it("with onSuspended: 'continue' keeps the lease across a short disconnection, and nobody else gets in", async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const b = await connectedClient();
    const path = lockPath();
    const lease = await acquire(a, path, { onSuspended: 'continue' });
    const states: string[] = [];
    lease.state$.subscribe((state) => states.push(state));
    proxy.cut();
    await vi.waitUntil(() => states.includes('suspended'));
    expect(await tryAcquire(b, path)).toBeNull();
    await vi.waitUntil(() => states.at(-1) === 'held', { timeout: 4_000 });
    expect(states).toEqual(['held', 'suspended', 'held']);
    expect(lease.isHeld).toBe(true);
    expect(await tryAcquire(b, path)).toBeNull();
    await lease.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it("with onSuspended: 'continue' gives up before the server could expire the session, and its node goes once back", async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const b = await connectedClient();
    const path = lockPath();
    const lease = await acquire(a, path, { onSuspended: 'continue' });
    const lost = firstValueFrom(lease.lost$);
    // The server hears `a`, `a` hears nothing: its session lives on, and it cannot tell. The
    // client keeps the session (only the server can say it expired); the lease gives up.
    proxy.holdReplies(true);
    const error = await lost;
    expect(error.reason).toBe('suspended');
    expect(a.state).toBe('suspended');
    expect(await tryAcquire(b, path)).toBeNull();
    proxy.holdReplies(false);
    // Back on the same session, the given-up lease's node is removed: the lock is free.
    const next = await acquire(b, path, { timeoutMs: 30_000 });
    expect(lease.isHeld).toBe(false);
    await next.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it('adopts its own node after a connection loss during the create: one child, no double hold, no orphan', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const b = await connectedClient();
    const path = lockPath();
    const blocker = await acquire(b, path);
    proxy.holdReplies();
    const pending = acquire(a, path);
    // The create reaches the server and is applied; its reply never comes back.
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 2);
    proxy.cut();
    proxy.holdReplies(false);
    await sleep(300);
    expect(await childrenOf(b, path)).toHaveLength(2);
    await blocker.release();
    const lease = await pending;
    expect(await childrenOf(b, path)).toEqual([lease.node.split('/').at(-1)]);
    expect(await tryAcquire(b, path)).toBeNull();
    await lease.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it('creates again when the create never reached the server', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const b = await connectedClient();
    const path = lockPath();
    await b.promises.mkdirp(path);
    proxy.pause();
    const pending = acquire(a, path);
    await sleep(100);
    expect(await childrenOf(b, path)).toEqual([]);
    proxy.cut();
    proxy.resume();
    const lease = await pending;
    expect(await childrenOf(b, path)).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it('leaves no orphan when it gives up while partitioned after its create was applied', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
    const b = await connectedClient();
    const path = lockPath();
    const blocker = await acquire(b, path);
    proxy.holdReplies();
    const pending = acquire(a, path, { timeoutMs: 800 }).catch((caught: unknown) => caught);
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 2);
    proxy.refuse(true);
    proxy.cut();
    proxy.holdReplies(false);
    expect(await pending).toBeInstanceOf(LockTimeoutError);
    // a's session lives on, and so does its node, until a reconnects and removes it.
    expect(await childrenOf(b, path)).toHaveLength(2);
    proxy.refuse(false);
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 1, { timeout: 6_000 });
    await blocker.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it('gives up at once when aborted while disconnected', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
    const path = lockPath();
    proxy.refuse(true);
    proxy.cut();
    await vi.waitUntil(() => a.state === 'suspended');
    const controller = new AbortController();
    const pending = acquire(a, path, { signal: controller.signal }).catch(
      (caught: unknown) => caught,
    );
    await sleep(100); // lets the acquire reach its wait for a connection (either way it must end)
    controller.abort(new Error('shutting down'));
    expect(((await pending) as Error).message).toBe('shutting down');
    // "At once": the connection is still refused, so it did not wait for one (nor for expiry).
    expect(a.state).toBe('suspended');
  });

  it('aborted and closed at once while its listing is in flight: rejects with the abort, nothing left unhandled', async () => {
    // The abort came while the create's pipelined listing was still out, and the close failed
    // that listing: the queue then listed again on the closed client after the abort, and that
    // call's rejection went unhandled (it ends a Node process by default). Found by the NestJS
    // adapter's shutdown (abort waiting calls, then close the client).
    const [holder, client] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(holder!, path);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    let closing: Promise<void> | undefined;
    process.on('unhandledRejection', onUnhandled);
    try {
      const controller = new AbortController();
      const stop = new Error('stop');
      const outcome = await acquire(client!, path, {
        signal: controller.signal,
        onQueued: () => {
          controller.abort(stop);
          closing = client!.close();
        },
      }).catch((caught: unknown) => caught);
      expect(outcome).toBe(stop);
      await sleep(50);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    // The closed session's node goes with the session's close: wait for it, then look.
    await closing;
    expect(await childrenOf(holder!, path)).toHaveLength(1);
    await held.release();
  });

  it('times out with LockTimeoutError and leaves no node', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const lease = await acquire(a!, path);
    const error = await acquire(b!, path, { timeoutMs: 300 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).path).toBe(path);
    expect((error as LockTimeoutError).waitedMs).toBeGreaterThanOrEqual(299);
    // b's node goes in the background (its delete is sent as the call rejects); a's listing, on
    // another session, may be answered before the server applies it.
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 1);
    expect(await childrenOf(a!, path)).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
  });

  it('removes its node when unsubscribed or aborted while waiting', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const lease = await acquire(a!, path);
    const waiting = mutex(b!, path).subscribe();
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    waiting.unsubscribe();
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 1);

    const controller = new AbortController();
    const pending = acquire(b!, path, { signal: controller.signal }).catch(
      (caught: unknown) => caught,
    );
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    controller.abort(new Error('changed my mind'));
    expect(((await pending) as Error).message).toBe('changed my mind');
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 1);
    await lease.release();
  });

  it('releases every lease when the client closes, and completes their observables', async () => {
    const [a, b] = await connectedClients(2);
    const paths = [lockPath('x'), lockPath('y'), lockPath('z')];
    const holds = paths.map((path) => holdWith(mutex(a!, path)));
    await vi.waitUntil(() => holds.every((hold) => hold.state.lease !== undefined));
    await a!.close();
    expect(holds.every((hold) => hold.state.completed && hold.state.error === undefined)).toBe(
      true,
    );
    expect(holds.every((hold) => !hold.state.lease!.isHeld)).toBe(true);
    for (const path of paths) {
      const lease = await tryAcquire(b!, path);
      expect(lease).not.toBeNull();
      await lease!.release();
    }
  });

  it('wakes exactly one waiter per release, whatever the queue length (no herd)', async () => {
    const { connectString } = await testZooKeeper();
    // Each session reads the ensemble's configuration once on connecting: done before counting.
    const options = { sessionTimeoutMs: 10_000, ...readsConfigurationAtOnce };
    const holder = await connectedClient(options);
    const waiters = await connectedClients(50, options);
    await Promise.all([holder, ...waiters].map(configurationRead));
    const path = lockPath();
    const first = await acquire(holder, path);
    const acquired: Lease[] = [];
    for (const waiter of waiters) {
      acquire(waiter, path).then(
        (lease) => acquired.push(lease),
        () => {},
      );
    }
    await vi.waitUntil(async () => (await childrenOf(holder, path)).length === 51, {
      timeout: 10_000,
    });
    await vi.waitUntil(async () => Number((await mntr(connectString)).zk_watch_count) >= 50);
    const watchesFired: number[] = [];
    const requests: number[] = [];
    let current = first;
    // Every release but the last has a waiter queued behind the next holder: 50 to 1 queued.
    for (let release = 0; release < 50; release++) {
      const before = await mntr(connectString);
      const xidsBefore = await lastRequestXids(connectString);
      await current.release();
      await vi.waitUntil(() => acquired.length === release + 1, { interval: 1 });
      const after = await mntr(connectString);
      watchesFired.push(Number(before.zk_watch_count) - Number(after.zk_watch_count));
      requests.push(requestsBetween(xidsBefore, await lastRequestXids(connectString)));
      current = acquired[release]!;
    }
    // Each release fires one watch (the next waiter's on the holder's node: nobody listens to
    // these leases' ends, so no node is watched by its owner) and nobody re-arms one...
    expect(watchesFired).toEqual(Array.from({ length: 50 }, () => 1));
    // ...and costs the same few requests whatever the queue's length (50 down to 1 queued):
    // the delete, and from the new holder one listing (a waiter that does not watch its own
    // node never trusts a hand-off: server-cost.integration.test.ts). Counted per session from
    // the server's `cons`: a packet count would include the 51 sessions' pings, more of them the
    // slower the machine.
    expect(requests).toEqual(Array.from({ length: 50 }, () => 2));
    await current.release();
    expect(await childrenOf(holder, path)).toEqual([]);
  });
});
