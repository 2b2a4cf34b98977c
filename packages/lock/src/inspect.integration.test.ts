/**
 * inspect / inspectTree against real ZooKeeper: zkrx's own mutex and semaphore, hand-made nodes
 * of the other layouts, and bad input. (Curator's and kazoo's own nodes: packages/interop.)
 */
import { hostname } from 'node:os';
import { type ZkClient, ZkError } from '@zkrx/core';
import { connectedClient, connectedClients, lockPath } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { acquire, acquireSemaphore, inspect, inspectTree, requestRevoke } from './index';
import { protectedName } from './recipe/lock-children';

/** Queues `client` on `path` (never acquiring) and resolves its node once it waits. */
async function queued(client: ZkClient, path: string) {
  let node: string | undefined;
  const controller = new AbortController();
  const waiting = acquire(client, path, {
    signal: controller.signal,
    onQueued: (queuedNode) => {
      node = queuedNode;
    },
  }).catch(() => undefined);
  await vi.waitUntil(() => node !== undefined);
  return {
    node: node as string,
    async leave() {
      controller.abort();
      await waiting;
    },
  };
}

describe('inspect', () => {
  it('a zkrx mutex: its holder, its waiters in order, each with session, data, age and whose session', async () => {
    const [holder, second, third] = await connectedClients(3);
    const path = lockPath();
    const lease = await acquire(holder!, path);
    const a = await queued(second!, path);
    const b = await queued(third!, path);

    const lock = await inspect(holder!, path);
    expect(lock).toMatchObject({
      path,
      kind: 'mutex',
      layout: 'curator',
      maxLeases: undefined,
    });
    expect(lock!.holders).toHaveLength(1);
    expect(lock!.holders[0]).toMatchObject({
      node: lease.node,
      mode: 'exclusive',
      layout: 'curator',
      sessionId: holder!.sessionId,
      data: `${hostname()}:${process.pid}`,
      revokeRequested: false,
      ownSession: true,
      czxid: lease.fencingToken,
    });
    expect(lock!.waiters.map((waiter) => waiter.node)).toEqual([a.node, b.node]);
    expect(lock!.waiters.map((waiter) => waiter.sessionId)).toEqual([
      second!.sessionId,
      third!.sessionId,
    ]);
    expect(lock!.waiters.every((waiter) => !waiter.ownSession)).toBe(true);
    for (const participant of [...lock!.holders, ...lock!.waiters]) {
      expect(participant.ageMs).toBeGreaterThanOrEqual(0);
      expect(participant.createdAt).toBeLessThanOrEqual(lock!.readAt + 60_000);
    }
    // Sequences increase along the queue.
    const sequences = [...lock!.holders, ...lock!.waiters].map((p) => p.sequence as number);
    expect(sequences).toEqual([...sequences].sort((x, y) => x - y));

    // A revoke request shows, and the next holder after a release.
    await requestRevoke(third!, lease.node);
    expect((await inspect(third!, path))!.holders[0]).toMatchObject({
      revokeRequested: true,
      ownSession: false,
    });
    await a.leave();
    await lease.release();
    await vi.waitUntil(async () => (await inspect(third!, path))?.holders[0]?.node === b.node);
    await b.leave();
  });

  it("a zkrx semaphore: the leases hold, takers wait on `locks` (a taker's waiting lease with them)", async () => {
    const [one, two, three] = await connectedClients(3);
    const path = lockPath('sem');
    const first = await acquireSemaphore(one!, path, { leases: 2 });
    const second = await acquireSemaphore(two!, path, { leases: 2 });
    const controller = new AbortController();
    const third = acquireSemaphore(three!, path, { leases: 2, signal: controller.signal }).catch(
      () => undefined,
    );
    // The third taker heads `locks` and has made its lease node: it waits for a free lease.
    const lock = await vi.waitUntil(async () => {
      const found = await inspect(one!, path);
      return found && found.waiters.length === 2 ? found : undefined;
    });
    expect(lock).toMatchObject({ path, kind: 'semaphore', layout: 'curator' });
    expect(lock.holders.map((holder) => holder.node).sort()).toEqual(
      [first.node, second.node].sort(),
    );
    expect(lock.holders.every((holder) => holder.mode === 'lease')).toBe(true);
    expect(lock.waiters.map((waiter) => [waiter.sessionId, waiter.mode])).toEqual([
      [three!.sessionId, 'exclusive'],
      [three!.sessionId, 'lease'],
    ]);
    // The same lock, asked for by its `leases` or `locks` child.
    expect((await inspect(one!, `${path}/leases`))?.path).toBe(path);
    expect((await inspect(one!, `${path}/locks`))?.path).toBe(path);
    controller.abort();
    await third;
    await first.release();
    await second.release();
  });

  it('hand-made Curator-layout nodes: a read-write lock and an election', async () => {
    const client = await connectedClient();
    const root = uniqueRoot('inspect');
    const rw = `${root}/rw`;
    const election = `${root}/election`;
    await client.promises.mkdirp(rw, { mode: 'container' });
    await client.promises.mkdirp(election, { mode: 'container' });
    const make = async (path: string, marker: string, data: string) =>
      (
        await client.promises.create(`${path}/${protectedName(marker).name}`, data, {
          mode: 'ephemeral',
          sequential: true,
        })
      ).path;
    const r1 = await make(rw, '__READ__', 'reader-1');
    const r2 = await make(rw, '__READ__', 'reader-2');
    const w3 = await make(rw, '__WRIT__', 'writer-3');
    const r4 = await make(rw, '__READ__', 'reader-4');
    const leader = await make(election, 'latch-', 'node-a');
    const follower = await make(election, 'latch-', 'node-b');

    const [electionLock, rwLock] = await inspectTree(client, root);
    expect(rwLock).toMatchObject({ path: rw, kind: 'read-write', layout: 'curator' });
    expect(rwLock!.holders.map((p) => [p.node, p.mode, p.data])).toEqual([
      [r1, 'read', 'reader-1'],
      [r2, 'read', 'reader-2'],
    ]);
    expect(rwLock!.waiters.map((p) => [p.node, p.mode])).toEqual([
      [w3, 'write'],
      [r4, 'read'],
    ]);
    expect(electionLock).toMatchObject({ path: election, kind: 'election' });
    expect(electionLock!.holders.map((p) => [p.node, p.mode, p.data])).toEqual([
      [leader, 'candidate', 'node-a'],
    ]);
    expect(electionLock!.waiters.map((p) => p.node)).toEqual([follower]);
    for (const node of [r1, r2, w3, r4, leader, follower]) await client.promises.delete(node);
  });

  it('walks a subtree: locks at every depth, sorted by path; nothing for plain nodes', async () => {
    const [holder, waiter] = await connectedClients(2);
    const root = uniqueRoot('inspect');
    await holder!.promises.mkdirp(`${root}/config/app`, { mode: 'container' });
    await holder!.promises.create(`${root}/config/app/flag`, 'on', { mode: 'ephemeral' });
    const deep = await acquire(holder!, `${root}/a/b/c/lock`);
    const top = await acquire(holder!, `${root}/z`);
    const waiting = await queued(waiter!, `${root}/z`);
    const locks = await inspectTree(waiter!, root);
    expect(locks.map((lock) => [lock.path, lock.holders.length, lock.waiters.length])).toEqual([
      [`${root}/a/b/c/lock`, 1, 0],
      [`${root}/z`, 1, 1],
    ]);
    expect(locks[1]!.waiters[0]).toMatchObject({ node: waiting.node, ownSession: true });
    // The tree at a lock path is that lock; a missing root has none.
    expect((await inspectTree(waiter!, `${root}/z`)).map((lock) => lock.path)).toEqual([
      `${root}/z`,
    ]);
    expect(await inspectTree(waiter!, `${root}/nothing`)).toEqual([]);
    expect(await inspect(waiter!, `${root}/nothing`)).toBeNull();
    expect(await inspect(waiter!, `${root}/config`)).toBeNull();
    await waiting.leave();
    await deep.release();
    await top.release();
    await holder!.promises.delete(`${root}/config/app/flag`);
  });

  it('refuses bad input with typed errors, creating nothing', async () => {
    const client = await connectedClient();
    for (const path of ['no-slash', '/trailing/', '/a//b', '', 42]) {
      const error = await inspect(client, path as string).catch((caught: unknown) => caught);
      expect(ZkError.isInstance(error), String(path)).toBe(true);
      expect((error as ZkError).code).toBe('InvalidPath');
      const treeError = await inspectTree(client, path as string).catch(
        (caught: unknown) => caught,
      );
      expect((treeError as ZkError).code).toBe('InvalidPath');
    }
    const notClient = await inspect({} as ZkClient, '/x').catch((caught: unknown) => caught);
    expect(ZkError.isInstance(notClient)).toBe(true);
    expect((notClient as ZkError).code).toBe('BadArguments');
    expect(await client.promises.exists('/no-slash')).toBeNull();
  });
});
