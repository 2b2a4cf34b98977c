/**
 * Attacks on the shortcuts the lock takes, each aimed at the ZooKeeper guarantee its safety
 * argument names: the trusted hand-off (ordering of replies and watch events on one connection),
 * re-entrancy (one hold, one node), the adoption of a node whose create's reply was lost (a
 * protected name made for one create), the semaphore's count (a listing containing our node).
 */
import type { ZkClient } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  untilEmpty,
  untilGone,
  untilWatching,
  watchersOf,
} from '@zkrx/test-support';
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { acquire, acquireSemaphore, type Lease, LockLostError } from './index';

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; readonly settled: boolean } {
  const state = { promise, settled: false };
  const settle = () => {
    state.settled = true;
  };
  promise.then(settle, settle);
  return state;
}

/**
 * The node `client` queued at `path` once it waits there: the server shows its session watching
 * `awaited` (the node before it) and, when `watchesOwn`, its own node too.
 */
async function queuedNode(
  client: ZkClient,
  admin: ZkClient,
  path: string,
  awaited: string,
  watchesOwn: boolean,
) {
  let node: string | undefined;
  await vi.waitUntil(async () => {
    const names = await childrenOf(admin, path);
    node = names.find((name) => !awaited.endsWith(`/${name}`));
    return node !== undefined;
  });
  const full = `${path}/${node}`;
  await untilWatching(await testZooKeeper(), client, awaited);
  if (watchesOwn) await untilWatching(await testZooKeeper(), client, full);
  return full;
}

/**
 * Acquires a revocable lease: it hears revocation requests made while it waits, so the queue
 * watches our node from its creation, and a hand-off may be trusted.
 */
function watchingOwnNode(client: ZkClient, path: string): Promise<Lease> {
  return acquire(client, path, { revocable: true });
}

/**
 * Of two waiters, exactly one holds after the holder leaves, and the other waits behind it:
 * never both. Resolves the one that holds and the other's pending acquisition.
 */
async function oneThenTheOther(
  first: { client: ZkClient; waiting: ReturnType<typeof tracked<Lease>> },
  second: { client: ZkClient; waiting: ReturnType<typeof tracked<Lease>> },
) {
  const winner = await Promise.race([
    first.waiting.promise.then(() => first),
    second.waiting.promise.then(() => second),
  ]);
  const loser = winner === first ? second : first;
  const lease = await winner.waiting.promise;
  await untilWatching(await testZooKeeper(), loser.client, lease.node, loser.waiting.promise);
  expect(loser.waiting.settled).toBe(false);
  expect(await winner.client.promises.exists(lease.node)).not.toBeNull();
  await lease.release();
  const next = await loser.waiting.promise;
  expect(await loser.client.promises.exists(next.node)).not.toBeNull();
  await next.release();
}

describe('the trusted hand-off (a waiter holds on its predecessor deletion, without listing)', () => {
  it.each([
    ['watching its own node (the hand-off may be trusted)', watchingOwnNode, true],
    ['not watching it (every hand-off lists)', acquire, false],
  ] as const)(
    "is not taken when the waiter's own node was deleted first (an operator): a waiter %s queues again",
    async (_, take, watchesOwn) => {
      const [holder, waiter, operator, late] = await connectedClients(4);
      const path = lockPath();
      const held = await acquire(holder!, path);
      const waiting = tracked(take(waiter!, path));
      const waiterNode = await queuedNode(waiter!, operator!, path, held.node, watchesOwn);
      await operator!.promises.delete(waiterNode);
      const lateWaiting = tracked(acquire(late!, path));
      // A waiter watching its own node hears of its deletion and queues again at once; one that
      // does not finds out at its next listing, once the holder's node goes.
      const queued = watchesOwn ? 3 : 2;
      await vi.waitUntil(async () => (await childrenOf(operator!, path)).length === queued);
      await held.release();
      await oneThenTheOther({ client: waiter!, waiting }, { client: late!, waiting: lateWaiting });
      await untilEmpty(operator!, path);
    },
  );

  it('is not taken on events replayed after a reconnection (their order is not the order of the changes)', async () => {
    const holder = await connectedClient();
    const operator = await connectedClient();
    const late = await connectedClient();
    const { client: waiter, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const held = await acquire(holder, path);
    const waiting = tracked(watchingOwnNode(waiter, path));
    const waiterNode = await queuedNode(waiter, operator, path, held.node, true);
    // The waiter hears nothing while its node, then the holder's, go; then its connection
    // drops, and the same session's watches are set again on a new one.
    proxy.pause();
    await operator.promises.delete(waiterNode);
    const lateWaiting = tracked(acquire(late, path));
    await vi.waitUntil(async () => (await childrenOf(operator, path)).length === 2);
    await held.release();
    await untilGone(operator, held.node);
    proxy.cut();
    proxy.resume();
    await oneThenTheOther({ client: waiter, waiting }, { client: late, waiting: lateWaiting });
  });
});

describe('a holder whose node goes', () => {
  it('is told at once (node-deleted), and whoever is next holds', async () => {
    const [holder, waiter, operator] = await connectedClients(3);
    const path = lockPath();
    const held = await acquire(holder!, path);
    const waiting = acquire(waiter!, path);
    await vi.waitUntil(async () => (await childrenOf(operator!, path)).length === 2);
    const lost = firstValueFrom(held.lost$);
    await operator!.promises.delete(held.node);
    expect(await lost).toMatchObject({ reason: 'node-deleted' });
    expect(held.signal.aborted).toBe(true);
    const next = await waiting;
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('is told as soon as it listens, when nobody listened while its node went (the watch is armed late)', async () => {
    const [holder, waiter, operator] = await connectedClients(3);
    const path = lockPath();
    const held = await acquire(holder!, path);
    const waiting = acquire(waiter!, path);
    const server = await testZooKeeper();
    await untilWatching(server, waiter!, held.node);
    // Nobody listens yet: the waiter watches the node, its owner does not.
    const session = (client: ZkClient) => (client.sessionId as string).replace(/^0+/, '');
    const watchers = (await watchersOf(server, held.node)).map((id) => id.replace(/^0+/, ''));
    expect(watchers).toEqual([session(waiter!)]);
    await operator!.promises.delete(held.node);
    const next = await waiting;
    expect(held.state).toBe('held');
    // The watch's first read finds the node gone: a name holding a UUID is never made again.
    const lost = firstValueFrom(held.lost$);
    expect(await lost).toMatchObject({ reason: 'node-deleted' });
    expect(held.signal.aborted).toBe(true);
    expect(held.isHeld).toBe(false);
    await next.release();
  });

  it('is told once it listens, when its own client had already heard of the deletion', async () => {
    const [holder, operator] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(holder!, path);
    // Someone else in the holder's process watches the node: the client shares that one watch.
    const seen: unknown[] = [];
    const other = holder!.watchData(held.node).subscribe((value) => seen.push(value));
    await vi.waitUntil(() => seen.length === 1);
    await operator!.promises.delete(held.node);
    await vi.waitUntil(() => seen.at(-1) === null);
    // Listening now: once the watch is armed, the shared watch answers with what the client
    // knows (no read needed).
    expect(await firstValueFrom(held.lost$)).toMatchObject({ reason: 'node-deleted' });
    expect(held.signal.aborted).toBe(true);
    other.unsubscribe();
  });

  it('does not re-enter a hold whose node an operator deleted: it queues behind the new holder', async () => {
    const server = await testZooKeeper();
    const [holder, waiter, operator] = await connectedClients(3);
    const path = lockPath();
    const held = await acquire(holder!, path);
    const waiting = acquire(waiter!, path);
    await vi.waitUntil(async () => (await childrenOf(operator!, path)).length === 2);
    await held.run(async () => {
      const lost = firstValueFrom(held.lost$);
      await operator!.promises.delete(held.node);
      await lost;
      const next = await waiting;
      const again = tracked(acquire(holder!, path));
      await untilWatching(server, holder!, next.node, again.promise);
      expect(again.settled).toBe(false);
      await next.release();
      const lease = await again.promise;
      expect(lease.node).not.toBe(held.node);
      await lease.release();
    });
  });

  it('does not re-enter a hold whose session expired: it holds again on the new session', async () => {
    const [holder, operator] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(holder!, path);
    await held.run(async () => {
      const lost = firstValueFrom(held.lost$);
      await expireSession(holder!);
      expect(await lost).toBeInstanceOf(LockLostError);
      const again = await acquire(holder!, path);
      expect(again.sessionId).not.toBe(held.sessionId);
      expect(await childrenOf(operator!, path)).toEqual([again.node.split('/').at(-1)]);
      await again.release();
    });
  });
});

describe('a create whose reply was lost', () => {
  it('is not adopted by a later session: the node of the expired one is not ours to hold', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const path = lockPath();
    const blocker = await acquire(other, path);
    proxy.holdReplies();
    const pending = acquire(client, path);
    // Applied by the server, unanswered; then the session ends before the client hears.
    await vi.waitUntil(async () => (await childrenOf(other, path)).length === 2);
    const first = (await childrenOf(other, path)).find((name) => !blocker.node.endsWith(name));
    await expireSession({
      connectString: (await testZooKeeper()).connectString,
      ...client.sessionCredentials()!,
    });
    proxy.cut();
    proxy.holdReplies(false);
    await vi.waitUntil(async () => !(await childrenOf(other, path)).includes(first!));
    await blocker.release();
    const lease = await pending;
    expect(lease.node.endsWith(first!)).toBe(false);
    expect(await childrenOf(other, path)).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
  });
});

describe("the semaphore's count", () => {
  it('never exceeds the leases when an operator deletes a holder’s lease node', async () => {
    const [a, b, c, operator] = await connectedClients(4);
    const path = lockPath('sem');
    const first = await acquireSemaphore(a!, path, { leases: 2 });
    const second = await acquireSemaphore(b!, path, { leases: 2 });
    const waiting = tracked(acquireSemaphore(c!, path, { leases: 2 }));
    await vi.waitUntil(async () => (await childrenOf(operator!, `${path}/leases`)).length === 3);
    const lost = firstValueFrom(first.lost$);
    await operator!.promises.delete(first.node);
    expect(await lost).toMatchObject({ reason: 'node-deleted' });
    const third = await waiting.promise;
    // Two live leases: b's and c's; a's was taken from it, and a was told.
    expect(first.isHeld).toBe(false);
    expect(second.isHeld && third.isHeld).toBe(true);
    expect(await childrenOf(operator!, `${path}/leases`)).toHaveLength(2);
    await second.release();
    await third.release();
  });
});

describe("a listened lease's node watch (armed once the hold is 100 ms old)", () => {
  it('reports a deletion made before it was armed: its first read finds the node gone', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const operator = await connectedClient();
    const path = lockPath();
    const held = await acquire(client, path);
    const lost = firstValueFrom(held.lost$);
    // Whenever the arming read goes (the hold's first 100 ms are not over yet), the server gets
    // it only after the deletion: the holder's connection is held meanwhile.
    proxy.pause();
    await operator.promises.delete(held.node);
    proxy.resume();
    expect(await lost).toMatchObject({ reason: 'node-deleted' });
    expect(held.signal.aborted).toBe(true);
  });

  it('hears a deletion made after it was armed at once (its notification)', async () => {
    const server = await testZooKeeper();
    const [client, operator] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(client!, path);
    expect(held.signal.aborted).toBe(false);
    await untilWatching(server, client!, held.node);
    await operator!.promises.delete(held.node);
    await vi.waitUntil(() => held.signal.aborted);
    expect(held.signal.reason).toMatchObject({ reason: 'node-deleted' });
  });
});

/**
 * Resolves once `client` has acted on everything the server sent it so far: a round trip (its
 * reply comes after every earlier one), then a turn of the event loop (what those replies set off
 * in promise callbacks, a hold decided without a request, is done by then).
 */
async function everythingHeard(client: ZkClient): Promise<void> {
  await client.promises.exists('/');
  await new Promise((resolve) => setImmediate(resolve));
}

/** Starts an acquisition; `queued` resolves once its first listing is read (before any wait). */
function queue(client: ZkClient, path: string, options: { signal?: AbortSignal } = {}) {
  let onQueued!: (node: string) => void;
  const queued = new Promise<string>((resolve) => {
    onQueued = resolve;
  });
  const waiting = tracked(acquire(client, path, { ...options, onQueued }));
  return { waiting, queued };
}

describe("the local hand-off (a waiter right behind its own client's holding node learns of the release from the client's own delete)", () => {
  it('sets no watch, and keeps ZooKeeper’s order: the waiter of another client behind it waits', async () => {
    const server = await testZooKeeper();
    const [client, other] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(client!, path);
    const mine = queue(client!, path);
    const mineNode = await mine.queued;
    const theirs = queue(other!, path);
    await theirs.queued;
    await untilWatching(server, other!, mineNode);
    // The waiter of the holder's client waits for its client's delete, not for a watch.
    expect(await watchersOf(server, held.node)).toEqual([]);
    await held.release();
    const next = await mine.waiting.promise;
    expect(next.node).toBe(mineNode);
    await everythingHeard(other!);
    expect(theirs.waiting.settled).toBe(false);
    await next.release();
    await (await theirs.waiting.promise).release();
  });

  it("is not taken when the waiter's node was deleted (an operator): the release's check fails, and the other client's waiter holds", async () => {
    const server = await testZooKeeper();
    const [client, other, operator] = await connectedClients(3);
    const path = lockPath();
    const held = await acquire(client!, path);
    const mine = queue(client!, path);
    const mineNode = await mine.queued;
    const theirs = queue(other!, path);
    await theirs.queued;
    await untilWatching(server, other!, mineNode);
    await operator!.promises.delete(mineNode);
    // The other client's waiter heard of it and now waits on the holder's node.
    await untilWatching(server, other!, held.node);
    await held.release();
    const lease = await theirs.waiting.promise;
    // Ours queued again, behind it.
    await untilWatching(server, client!, lease.node, mine.waiting.promise);
    expect(mine.waiting.settled).toBe(false);
    await lease.release();
    const again = await mine.waiting.promise;
    expect(again.node).not.toBe(mineNode);
    await again.release();
  });

  it('holds once the holder hears that an operator deleted its node, not before, and not never (the holder nobody listens to watches its node for its local waiter)', async () => {
    const [client, operator] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(client!, path);
    const mine = queue(client!, path);
    await mine.queued;
    await operator!.promises.delete(held.node);
    const next = await mine.waiting.promise;
    // The waiter listed after the holder's lease was lost (its node's watch, armed for the
    // waiter once the hold was 100 ms old, found the node gone).
    expect(held.state).toBe('lost');
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('is not taken when the node before it gave up while waiting: the waiter lists, and waits for the holder of another client', async () => {
    const server = await testZooKeeper();
    const [client, other] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(other!, path);
    const giving = new AbortController();
    const before = queue(client!, path, { signal: giving.signal });
    const beforeNode = await before.queued;
    const mine = queue(client!, path);
    await mine.queued;
    giving.abort();
    await expect(before.waiting.promise).rejects.toBeDefined();
    await untilGone(other!, beforeNode);
    await everythingHeard(client!);
    expect(mine.waiting.settled).toBe(false);
    // It waits on the holder now (a watch of its own, not the one left by the node that gave up).
    await untilWatching(server, client!, held.node, mine.waiting.promise);
    await held.release();
    await (await mine.waiting.promise).release();
  });

  it('is not taken past a waiter of another client between them: the release hands over to nobody, and that waiter holds first', async () => {
    const server = await testZooKeeper();
    const [client, other] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(client!, path);
    const theirs = queue(other!, path);
    const theirNode = await theirs.queued;
    await untilWatching(server, other!, held.node);
    const mine = queue(client!, path);
    await mine.queued;
    await untilWatching(server, client!, theirNode);
    await held.release();
    const lease = await theirs.waiting.promise;
    await everythingHeard(client!);
    expect(mine.waiting.settled).toBe(false);
    await lease.release();
    await (await mine.waiting.promise).release();
  });

  it("is not taken across a session's expiry: both nodes went with it, and the other client's waiter behind them holds first", async () => {
    const server = await testZooKeeper();
    const [client, other] = await connectedClients(2);
    const path = lockPath();
    const held = await acquire(client!, path);
    const mine = queue(client!, path);
    const mineNode = await mine.queued;
    const theirs = queue(other!, path);
    await theirs.queued;
    await untilWatching(server, other!, mineNode);
    const lost = firstValueFrom(held.lost$);
    await expireSession(client!);
    expect(await lost).toBeInstanceOf(LockLostError);
    const lease = await theirs.waiting.promise;
    // Ours queued again on the new session, behind it.
    await untilWatching(server, client!, lease.node, mine.waiting.promise);
    expect(mine.waiting.settled).toBe(false);
    await lease.release();
    const again = await mine.waiting.promise;
    expect(again.sessionId).not.toBe(held.sessionId);
    await again.release();
  });
});
