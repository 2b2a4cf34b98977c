/**
 * The lock path is a container: ZooKeeper deletes it once idle, and a new one made later numbers
 * its children from 0 again. What a client learnt of the old path must not make it hold the new.
 */
import type { ZkClient } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  lockPath,
  reapingClients,
  reapingZooKeeper,
  untilGone,
  untilWatching,
} from '@zkrx/test-support';
import { startProxy } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { acquire, acquireAll, acquireSemaphore, tryAcquire } from './index';

/** Tracks whether a promise has settled, synchronously readable. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; readonly settled: boolean } {
  const state = { promise, settled: false };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

/** `a` takes the lock alone and lets it go; then ZooKeeper reaps the idle path. */
async function heldAloneThenReaped(a: ZkClient, path: string): Promise<void> {
  const lease = await acquire(a, path);
  await lease.release();
  await untilGone(a, path);
}

describe('an idle lock path reaped between two uses, then the other client first', () => {
  it('mutex: tryAcquire by the earlier holder finds the lock taken', async () => {
    const [a, b] = await reapingClients(2);
    const path = lockPath();
    await heldAloneThenReaped(a!, path);
    const other = await acquire(b!, path);
    expect(other.node).toMatch(/-lock-0000000000$/);
    expect(await tryAcquire(a!, path)).toBeNull();
    expect(other.isHeld).toBe(true);
    await other.release();
  });

  it('mutex: acquire by the earlier holder waits for the other holder', async () => {
    const server = await reapingZooKeeper();
    const [a, b] = await reapingClients(2);
    const path = lockPath();
    await heldAloneThenReaped(a!, path);
    const other = await acquire(b!, path);
    const waiting = tracked(acquire(a!, path));
    await untilWatching(server, a!, other.node, waiting.promise);
    expect(waiting.settled).toBe(false);
    await other.release();
    const lease = await waiting.promise;
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });

  it('multi-lock: waits for the other holder of its first path', async () => {
    const server = await reapingZooKeeper();
    const [a, b] = await reapingClients(2);
    const first = lockPath('first');
    const second = `${first.slice(0, first.lastIndexOf('/'))}/second`;
    const alone = await acquireAll(a!, [first, second]);
    await alone.release();
    await untilGone(a!, first);
    await untilGone(a!, second);
    const other = await acquireAll(b!, [first, second]);
    const waiting = tracked(acquireAll(a!, [first, second]));
    await untilWatching(server, a!, other.leases[0]!.node, waiting.promise);
    expect(waiting.settled).toBe(false);
    await other.release();
    const lease = await waiting.promise;
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });

  it('semaphore (1 lease): the earlier holder waits while the other holds', async () => {
    const [a, b] = await reapingClients(2);
    const path = lockPath('semaphore');
    const alone = await acquireSemaphore(a!, path, { leases: 1 });
    await alone.release();
    await untilGone(a!, `${path}/leases`);
    const other = await acquireSemaphore(b!, path, { leases: 1 });
    let queued: string | undefined;
    const waiting = tracked(
      acquireSemaphore(a!, path, {
        leases: 1,
        onQueued: (node) => {
          if (node.startsWith(`${path}/leases/`)) queued = node;
        },
      }),
    );
    // The waiter decides in the turn `onQueued` is called in, on that listing: one that took a
    // lease without counting would have settled by the time the poll sees `queued`. (The server
    // lists no child watches, a semaphore waiter's wait, so no watch can be the gate.)
    await vi.waitUntil(() => queued !== undefined || waiting.settled);
    expect(waiting.settled).toBe(false);
    expect(await childrenOf(b!, `${path}/leases`)).toHaveLength(2);
    await other.release();
    const lease = await waiting.promise;
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });

  it('mutex, one client: a waiter behind its own client’s node, both deleted and the path reaped, waits for the new path’s holder', async () => {
    const server = await reapingZooKeeper();
    const proxy = await startProxy(server.connectString);
    try {
      const a = await connectedClient({ connect: proxy.connectString, sessionTimeoutMs: 10_000 });
      const [b, operator] = await reapingClients(2);
      const path = lockPath();
      const held = await acquire(a, path);
      let queuedNode: string | undefined;
      const waiting = tracked(
        acquire(a, path, {
          onQueued: (node) => {
            queuedNode ??= node;
          },
        }),
      );
      await vi.waitUntil(() => queuedNode !== undefined);
      // The waiter waits for its own client's removal of the holder's node (no watch). Behind
      // the client's back (it hears nothing meanwhile), both nodes go, the path is reaped and
      // made again, with another holder.
      proxy.pause();
      await operator!.promises.delete(queuedNode!);
      await operator!.promises.delete(held.node);
      await untilGone(operator!, path);
      const other = await acquire(b!, path);
      expect(other.node).toMatch(/-lock-0000000000$/);
      proxy.resume();
      // The holder's lease hears of its node's deletion (watched for its local waiter); the
      // waiter queues again, on the new path, behind the other holder.
      await untilWatching(server, a, other.node, waiting.promise);
      expect(waiting.settled).toBe(false);
      expect(held.state).toBe('lost');
      await other.release();
      const lease = await waiting.promise;
      expect(lease.isHeld).toBe(true);
      await lease.release();
    } finally {
      proxy.cut();
      await proxy.close();
    }
  });
});
