/**
 * The copy a lock watch keeps from its watch's events (`LockMirror`), attacked where its
 * argument could break: queues churned by many sessions (a mutex's nodes, a semaphore's
 * `leases` and `locks`, a read-write lock's), a connection cut meanwhile, a read's reply and a
 * later delete of its node handed over in one chunk — each time the copy must read as a fresh
 * `inspect` does once the changes stop. And what a change costs: the reads of what changed, not
 * of the queue.
 */
import { randomUUID } from 'node:crypto';
import type { ZkClient } from '@zkrx/core';
import { acquireSemaphore, type InspectedLock, inspect } from '@zkrx/lock';
import { acquireRead, acquireWrite } from '@zkrx/rwlock';
import { connectedClients, countedClient, proxiedClient } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockWatch } from './lock-watch';

const watches: LockWatch[] = [];
afterEach(() => {
  for (const watch of watches.splice(0)) watch.close();
});

function watchLock(client: ZkClient, path: string): LockWatch {
  const watch = new LockWatch(client, path, () => {});
  watches.push(watch);
  return watch;
}

/** What a view of a lock shows: who holds and waits, in order, with their data and versions. */
function shown(lock: InspectedLock | null | undefined) {
  if (!lock) return lock ?? null;
  const each = (list: InspectedLock['holders']) =>
    list.map(({ node, data, version, sessionId, mode }) => ({
      node,
      data,
      version,
      sessionId,
      mode,
    }));
  return {
    kind: lock.kind,
    layout: lock.layout,
    holders: each(lock.holders),
    waiters: each(lock.waiters),
    maxLeases: lock.maxLeases,
    pzxid: lock.pzxid,
  };
}

/**
 * Waits until the watch shows, from its copy, what a fresh read shows now (the tree quiet).
 */
async function untilSame(watch: LockWatch, reader: ZkClient, path: string): Promise<void> {
  const fresh = shown(await inspect(reader, path));
  await expect
    .poll(() => (watch.busy || !watch.live ? 'reading' : shown(watch.latest?.lock)), {
      timeout: 20_000,
    })
    .toEqual(fresh);
}

const lockNode = (path: string) => `${path}/_c_${randomUUID()}-lock-`;

describe("a lock watch's copy of the queue", () => {
  it('reads as a fresh inspect after many sessions churned a mutex, a semaphore and a read-write lock, through a cut', async () => {
    const root = uniqueRoot('mirror');
    const [mutexPath, semaphorePath, rwPath] = ['orders', 'exports', 'reports'].map(
      (name) => `${root}/${name}`,
    ) as [string, string, string];
    const { client: viewer, proxy } = await proxiedClient({ sessionTimeoutMs: 20_000 });
    const writers = await connectedClients(6);
    await writers[0]?.promises.mkdirp(mutexPath);
    const mutex = watchLock(viewer, mutexPath);
    const semaphore = watchLock(viewer, semaphorePath);
    const rw = watchLock(viewer, rwPath);
    // Each watch's copy read whole once its watch is in place.
    await expect
      .poll(() => [mutex, semaphore, rw].every((watch) => watch.live && !watch.busy))
      .toBe(true);

    const churn = async (client: ZkClient, index: number) => {
      for (let round = 0; round < 12; round++) {
        // Raw queue nodes: created, changed (a revoke request's write), deleted, some at once.
        const made = await Promise.all(
          Array.from({ length: 3 }, (_, n) =>
            client.promises.create(lockNode(mutexPath), `w${index}-${round}-${n}`, {
              mode: 'ephemeral',
              sequential: true,
            }),
          ),
        );
        await client.promises.set(made[1]?.path as string, '__REVOKE__');
        void client.promises.delete(made[0]?.path as string);
        await client.promises.delete(made[1]?.path as string);
        if (round % 3 === 2) await client.promises.delete(made[2]?.path as string);
        const lease = await acquireSemaphore(client, semaphorePath, { leases: 2 });
        const rwLease =
          index % 2 === 0 ? await acquireRead(client, rwPath) : await acquireWrite(client, rwPath);
        await lease.release();
        await rwLease.release();
        if (index === 0 && round === 5) proxy.cut(); // the viewer's connection: a resync
      }
    };
    await Promise.all(writers.map(churn));
    // The semaphore and the read-write lock keep a holder and a waiter each to be shown.
    const [a, b] = writers as [ZkClient, ZkClient];
    await acquireSemaphore(a, semaphorePath, { leases: 1 });
    const semaphoreWaiting = acquireSemaphore(b, semaphorePath, { leases: 1 });
    await acquireRead(a, rwPath);
    const rwWaiting = acquireWrite(b, rwPath);
    // Every notification of the changes above reaches the viewer before this reply.
    await viewer.promises.exists(root);
    for (const [watch, path] of [
      [mutex, mutexPath],
      [semaphore, semaphorePath],
      [rw, rwPath],
    ] as const) {
      await untilSame(watch, a, path);
    }
    expect(mutex.latest?.lock?.holders.length).toBeGreaterThan(0);
    expect(semaphore.latest?.lock?.waiters.length).toBeGreaterThan(0);
    expect(rw.latest?.lock?.waiters.map((waiter) => waiter.mode)).toEqual(['write']);
    void semaphoreWaiting.catch(() => {});
    void rwWaiting.catch(() => {});
  });

  it("drops a read whose node's delete was handed over before its reply (one chunk)", async () => {
    const path = `${uniqueRoot('mirror')}/orders`;
    const { client: viewer, proxy } = await proxiedClient({ sessionTimeoutMs: 20_000 });
    const [other] = (await connectedClients(1)) as [ZkClient];
    await other.promises.mkdirp(path);
    const holder = await other.promises.create(lockNode(path), 'holder', {
      mode: 'ephemeral',
      sequential: true,
    });
    const victim = await viewer.promises.create(lockNode(path), 'waiter', {
      mode: 'ephemeral',
      sequential: true,
    });
    const watch = watchLock(viewer, path);
    await untilSame(watch, other, path);
    // On the change of the victim's data, the copy reads it; its reply is held, then the victim
    // is deleted — by the viewer's own session, so that its notification and the delete's reply
    // follow the read's reply on the same connection — and all of it is let go at once.
    const resyncs: string[] = [];
    let held = false;
    const tap = viewer.watchTree(path).subscribe((event) => {
      if (event.type === 'resync') resyncs.push(event.reason);
      else if (event.type === 'changed' && event.path === victim.path && !held) {
        held = true;
        proxy.holdReplies(true);
      }
    });
    try {
      await expect.poll(() => resyncs).toEqual(['started']);
      await other.promises.set(victim.path, 'changed');
      await expect.poll(() => proxy.heldReplyBytes).toBeGreaterThan(0);
      const readReply = proxy.heldReplyBytes;
      const deleted = viewer.promises.delete(victim.path);
      // The notification (32 bytes and the path) and the delete's reply (20 bytes) held too.
      const more = 52 + Buffer.byteLength(victim.path);
      await expect.poll(() => proxy.heldReplyBytes).toBeGreaterThanOrEqual(readReply + more);
      proxy.holdReplies(false);
      await deleted;
      await untilSame(watch, other, path);
      expect(watch.latest?.lock?.waiters).toEqual([]);
      expect(watch.latest?.lock?.holders.map((each) => each.node)).toEqual([holder.path]);
      // The race ran on one connection: no resync read the copy whole again.
      expect(resyncs).toEqual(['started']);
    } finally {
      tap.unsubscribe();
    }
  });

  it('costs the reads of what changed: a hand-over on 200 waiters is one or two gets', async () => {
    const path = `${uniqueRoot('mirror')}/orders`;
    const { client: viewer, packets } = await countedClient();
    const [other] = (await connectedClients(1)) as [ZkClient];
    await other.promises.mkdirp(path);
    const nodes: string[] = [];
    for (let at = 0; at < 200; at += 50) {
      const made = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          other.promises.create(lockNode(path), `waiter-${at + n}`, {
            mode: 'ephemeral',
            sequential: true,
          }),
        ),
      );
      nodes.push(...made.map((node) => node.path));
    }
    nodes.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
    const watch = watchLock(viewer, path);
    await untilSame(watch, other, path);
    for (const node of nodes.slice(0, 5)) {
      const before = packets.replies;
      await other.promises.delete(node);
      await viewer.promises.exists(path); // after the notification: its reads are sent
      await untilSame(watch, other, path);
      // The read of the lock path's Stat (its pzxid), and the exists above: not 200 reads.
      expect(packets.replies - before).toBeLessThanOrEqual(3);
    }
    expect(watch.latest?.lock?.holders.map((each) => each.node)).toEqual([nodes[5]]);
  });
});
