/**
 * A client whose lock paths were mostly missing lately (a fleet's start: thousands of item locks,
 * none made yet) sends each path's create in front of its node's: an acquisition on a missing
 * path costs 3 replies instead of 5 (`queue-node.ts`, `makePathAhead`). Its argument — ZooKeeper
 * applies one session's requests in order, and the listing behind our node still decides — is
 * attacked where it could fail: the create in front meets a path held by another client
 * (NodeExists: the acquisition waits behind the holder, which keeps the lock), and a client
 * whose paths exist stops paying for it. Counted on the wire (`countedClient`).
 */
import { parentOf, type ZkClient } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  countedClient,
  lockPath,
  untilWatching,
} from '@zkrx/test-support';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire } from './index';

/** A fresh folder that exists, for lock paths under it. */
async function folder(client: ZkClient): Promise<string> {
  const path = parentOf(lockPath());
  await client.promises.create(path, undefined, { parents: 'persistent' });
  return path;
}

/** Replies the server sent for one acquisition of `path` (its release not counted). */
async function acquisitionCost(
  client: ZkClient,
  packets: { replies: number },
  path: string,
): Promise<number> {
  const before = packets.replies;
  const lease = await acquire(client, path);
  const cost = packets.replies - before;
  await lease.release();
  return cost;
}

describe("a lock path's create sent in front of the node's", () => {
  it('is sent while the paths were mostly missing (3 replies, not 5) and no longer once they exist', async () => {
    const { client, packets } = await countedClient();
    const other = await connectedClient();
    const root = await folder(other);
    const costs: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      costs.push(await acquisitionCost(client, packets, `${root}/missing-${i}`));
    }
    for (let i = 0; i < 3; i += 1) {
      const path = `${root}/present-${i}`;
      await other.promises.create(path);
      costs.push(await acquisitionCost(client, packets, path));
    }
    // Missing: create (NoNode), listing (NoNode), the path, create, listing — twice, then the
    // path in front. Present: NodeExists in front twice (the average falls below a third),
    // then create and listing alone.
    expect(costs).toEqual([5, 5, 3, 3, 3, 2]);
  });

  it('meets a lock held by another client: NodeExists, and the acquisition waits behind the holder', async () => {
    const server = await testZooKeeper();
    const { client, packets } = await countedClient();
    const holder = await connectedClient();
    const root = await folder(holder);
    // Two missing paths: the next acquisition sends the path in front.
    for (let i = 0; i < 2; i += 1) await acquisitionCost(client, packets, `${root}/missing-${i}`);
    const path = `${root}/held`;
    const held = await acquire(holder, path);
    const pathBefore = await holder.promises.get(path);
    const before = packets.replies;
    let settled = false;
    const waiting = acquire(client, path).finally(() => {
      settled = true;
    });
    await untilWatching(server, client, held.node, waiting);
    expect(settled).toBe(false);
    // NodeExists for the path in front, our create, the listing, the watch on the holder's node.
    expect(packets.replies - before).toBe(4);
    expect(held.isHeld).toBe(true);
    // The path is the holder's still (our create in front changed nothing): two nodes in it.
    const pathNow = await holder.promises.get(path);
    expect(pathNow.stat.czxid).toBe(pathBefore.stat.czxid);
    expect(pathNow.data).toEqual(pathBefore.data);
    expect(await childrenOf(holder, path)).toHaveLength(2);
    await held.release();
    const lease = await waiting;
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });
});
