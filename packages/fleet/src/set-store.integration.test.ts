/**
 * The stored item sets (set-store.ts) against a real ZooKeeper where a claim's reply is lost:
 * the soak's fleet run at seed 20261125 left a claim unready and unwritten (no chunk) for 26 s,
 * from a member that left while the servers were away; a claim left so keeps the set from
 * every reader (the coordinator reads a set once its claim says ready).
 */
import type { ZkClient } from '@zkrx/core';
import { connectedClient, proxiedClient } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { checkItemSet } from './item-set';
import { SetKeeper, SetReader } from './set-store';

/**
 * A keeper through a proxy that holds the server's replies from its claim's create on (the
 * keeper reads the claim first, and creates it on that reply): the claim is made, unanswered.
 */
async function claimedWithReplyHeld() {
  const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
  const observer = await connectedClient();
  const path = uniqueRoot('fleet');
  const set = checkItemSet(['a', 'b', 'c'], path, 'partition');
  const head = `${path}/sets/${set.digest}`;
  // Its parents made first: a create with parents waits for each parent's reply.
  await observer.promises.mkdirp(`${path}/sets`);
  const create = client.promises.create;
  let held = false;
  vi.spyOn(client.promises, 'create').mockImplementation((node, ...rest) => {
    if (node === head && !held) {
      held = true;
      proxy.holdReplies();
    }
    return create(node, ...rest);
  });
  const keeper = new SetKeeper(client, path, () => {}, 50);
  keeper.keep(set);
  await vi.waitUntil(async () => (await observer.promises.exists(head)) !== null);
  return { client, proxy, observer, path, set, keeper, head };
}

function disconnected(client: ZkClient): boolean {
  return client.state !== 'connected' && client.state !== 'reconnected';
}

describe('stored item sets, a claim whose reply was lost', () => {
  it('is written on once the same session is back: the set is read', async () => {
    const { client, proxy, observer, path, set, keeper } = await claimedWithReplyHeld();
    const session = client.sessionId;
    proxy.cut();
    proxy.holdReplies(false);
    await client.connected();
    expect(client.sessionId).toBe(session);
    const reader = new SetReader(
      observer,
      path,
      () => {},
      () => {},
    );
    reader.need(new Set([set.digest]));
    await vi.waitUntil(() => reader.get(set.digest) !== undefined);
    expect(reader.get(set.digest)?.items).toEqual(set.items);
    reader.stop();
    keeper.stop();
  });

  it('is removed when the keeper stops before it is back', async () => {
    const { client, proxy, observer, keeper, head } = await claimedWithReplyHeld();
    const session = client.sessionId;
    proxy.refuse();
    proxy.cut();
    await vi.waitUntil(() => disconnected(client));
    keeper.stop();
    proxy.holdReplies(false);
    proxy.refuse(false);
    await client.connected();
    expect(client.sessionId).toBe(session);
    await vi.waitUntil(async () => (await observer.promises.exists(head)) === null);
  });
});
