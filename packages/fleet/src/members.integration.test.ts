/**
 * `members` against a real ZooKeeper: id order, what a join costs each member (ids alone, and
 * with details: data, sessions, join order), a duplicate id as an error,
 * joining again after an expiry or a deletion, a create whose reply was lost, leaving on
 * unsubscribe and on close, and bad input refused before anything is sent.
 */
import type { ZkClient } from '@zkrx/core';
import { ZkError } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  countedClient,
  proxiedClient,
  watchersOf,
} from '@zkrx/test-support';
import { expireSession, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DuplicateMemberError, type MemberDetails, members } from './index';

const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
});

/**
 * Joins and records every emission and the error, if any. The members are read with their
 * details unless `details: false` (then only `id` is set: the type says more than there is).
 */
function join(
  client: ZkClient,
  path: string,
  id: string,
  options: { data?: string; details?: boolean } = {},
) {
  const seen: (readonly MemberDetails[])[] = [];
  const state: { error: unknown; completed: boolean } = { error: undefined, completed: false };
  const { data, details = true } = options;
  const subscription = members(client, path, { id, data, details }).subscribe({
    next: (list) => seen.push(list as readonly MemberDetails[]),
    error: (error: unknown) => {
      state.error = error;
    },
    complete: () => {
      state.completed = true;
    },
  });
  subscriptions.push(subscription);
  return {
    seen,
    state,
    subscription,
    latest: () => seen.at(-1),
    ids: () => seen.at(-1)?.map((member) => member.id),
  };
}

/**
 * `one` joins through a proxy that holds the server's replies: its create is applied (the node
 * is there, as `observer` sees it) and its reply has not come back.
 */
async function joinedWithReplyHeld() {
  const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
  const observer = await connectedClient();
  const path = `${uniqueRoot('fleet')}/workers`;
  await observer.promises.mkdirp(path);
  proxy.holdReplies();
  const one = join(a, path, 'one');
  await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 1);
  return { a, proxy, observer, path, one };
}

describe('members', () => {
  it('emits the whole membership in id order, ids alone by default; unsubscribing leaves', async () => {
    const [a, b, c] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const first = join(a, path, 'worker-b', { data: '10.0.0.1:80', details: false });
    await vi.waitUntil(() => first.seen.length > 0);
    // The first emission already has this member in it; ids only.
    expect(first.seen[0]).toEqual([{ id: 'worker-b' }]);
    const second = join(b, path, 'worker-a', { details: false });
    await vi.waitUntil(() => second.seen.length > 0);
    const third = join(c, path, 'worker-c', { details: false });
    await vi.waitUntil(() => first.latest()?.length === 3);
    // Id order, not join order.
    expect(first.ids()).toEqual(['worker-a', 'worker-b', 'worker-c']);
    await vi.waitUntil(() => second.latest()?.length === 3 && third.latest()?.length === 3);
    expect(second.latest()).toEqual(first.latest());
    expect(first.latest()).toEqual([{ id: 'worker-a' }, { id: 'worker-b' }, { id: 'worker-c' }]);

    second.subscription.unsubscribe();
    await vi.waitUntil(() => first.latest()?.length === 2);
    expect(first.ids()).toEqual(['worker-b', 'worker-c']);
    expect(await childrenOf(c, path)).toEqual(['worker-b', 'worker-c']);
    first.subscription.unsubscribe();
    third.subscription.unsubscribe();
    await vi.waitUntil(async () => (await childrenOf(c, path)).length === 0);
  });

  it('with details: data, sessions and join times, still in id order', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const first = join(a, path, 'worker-b', { data: '10.0.0.1:80' });
    await vi.waitUntil(() => first.seen.length > 0);
    expect(first.seen[0]).toMatchObject([
      { id: 'worker-b', data: '10.0.0.1:80', sessionId: a.sessionId },
    ]);
    const second = join(b, path, 'worker-a');
    await vi.waitUntil(() => first.latest()?.length === 2 && second.latest()?.length === 2);
    expect(second.latest()).toEqual(first.latest());
    const [x, y] = first.latest() as MemberDetails[];
    expect(x).toMatchObject({ id: 'worker-a', data: '', sessionId: b.sessionId });
    expect(y).toMatchObject({ id: 'worker-b', data: '10.0.0.1:80', sessionId: a.sessionId });
    // worker-b joined first: its node's creation is the earlier one.
    expect(y?.czxid).toBeLessThan(x?.czxid as number);
    expect(x?.joinedAt).toBeGreaterThan(0);
  });

  it('a join costs each member one notification and one listing; with details, one read more', async () => {
    for (const details of [false, true]) {
      const path = `${uniqueRoot('fleet')}/workers`;
      const { client: watcher, packets } = await countedClient();
      const others = await connectedClients(3);
      const seeing = join(watcher, path, 'w', { details });
      const joined = others.slice(0, 2).map((client, index) => join(client, path, `m${index}`));
      await vi.waitUntil(() => seeing.latest()?.length === 3);
      await vi.waitUntil(() => joined.every((member) => member.latest()?.length === 3));
      // Settled: every member listed all three and its watch is armed again.
      packets.replies = 0;
      packets.notifications = 0;
      join(others[2] as ZkClient, path, 'm2');
      await vi.waitUntil(() => seeing.latest()?.length === 4);
      expect({ notifications: packets.notifications, replies: packets.replies }).toEqual({
        notifications: 1,
        replies: details ? 2 : 1,
      });
    }
  });

  it('watches the group, not each member: a member node is watched by its own session only', async () => {
    const server = await testZooKeeper();
    const clients = await connectedClients(4);
    const path = `${uniqueRoot('fleet')}/workers`;
    const joined = clients.map((client, index) => join(client, path, `w${index}`));
    await vi.waitUntil(() => joined.every((member) => member.latest()?.length === 4));
    const sessions = clients.map((client) => client.sessionId as string);
    // On a member node, only its owner's own watch (it joins again when an operator deletes
    // it); the others keep one children watch on the group (`wchp` lists data watches only), so
    // a join costs each of them one notification.
    for (const [index, session] of sessions.entries()) {
      const watchers = await watchersOf(server, `${path}/w${index}`);
      expect(watchers.filter((watcher) => watcher !== session)).toEqual([]);
    }
  });

  it('refuses the same id twice on one client: DuplicateMemberError, the first keeps its node', async () => {
    const [a, observer] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const first = join(a, path, 'w');
    await vi.waitUntil(() => first.seen.length > 0);
    const second = join(a, path, 'w');
    await vi.waitUntil(() => second.state.error !== undefined || second.seen.length > 0);
    expect(DuplicateMemberError.isInstance(second.state.error)).toBe(true);
    expect(second.state.error).toMatchObject({ path, id: 'w' });
    second.subscription.unsubscribe();
    const stat = await observer.promises.exists(`${path}/w`);
    expect(stat?.ephemeralOwner).toBe(a.sessionId);
    // Two ids on one client are two members.
    const other = join(a, path, 'v');
    await vi.waitUntil(() => other.latest()?.length === 2 && first.latest()?.length === 2);
    expect(first.ids()).toEqual(['v', 'w']);
  });

  it('a restarted member with the same id waits for its old session to expire, then joins', async () => {
    const { client: old, proxy } = await proxiedClient({ sessionTimeoutMs: 2_000 });
    const fresh = await connectedClient({ sessionTimeoutMs: 4_000 });
    const path = `${uniqueRoot('fleet')}/workers`;
    const before = join(old, path, 'w');
    await vi.waitUntil(() => before.seen.length > 0);
    const oldSession = old.sessionId;
    // The old process is gone: its connection cut for good; its session lives until it expires.
    proxy.refuse();
    proxy.cut();
    const after = join(fresh, path, 'w');
    await vi.waitUntil(() => after.state.error !== undefined || after.seen.length > 0, {
      timeout: 30_000,
    });
    expect(after.state.error).toBeUndefined();
    expect(after.latest()).toMatchObject([{ id: 'w', sessionId: fresh.sessionId }]);
    expect(fresh.sessionId).not.toBe(oldSession);
  });

  it('leaves nothing behind when unsubscribed while its create was in flight and the reply lost', async () => {
    const { proxy, observer, path, one } = await joinedWithReplyHeld();
    one.subscription.unsubscribe();
    proxy.cut();
    proxy.holdReplies(false);
    // The same session comes back: the node it made is removed.
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 0);
    expect(one.state.error).toBeUndefined();
  });

  it('leaves nothing behind when unsubscribed after its create was lost, before it reconnects', async () => {
    // The soak's fleet run at seed 20261125: a member's create applied as the quorum went, its
    // reply lost with the connection; the member left while the servers were down; its session
    // came back, and its node stayed a member's (with no member behind it) for 16 s.
    const { a, proxy, observer, path, one } = await joinedWithReplyHeld();
    const session = a.sessionId;
    proxy.refuse();
    proxy.cut();
    // The create has failed (ConnectionLoss): the join waits for a connection to try again.
    await vi.waitUntil(() => a.state !== 'connected' && a.state !== 'reconnected');
    one.subscription.unsubscribe();
    proxy.holdReplies(false);
    proxy.refuse(false);
    await a.connected();
    expect(a.sessionId).toBe(session);
    // The same session comes back: the node its lost create made is removed.
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 0);
    expect(one.state.error).toBeUndefined();
  });

  it('refuses an id another live member has: DuplicateMemberError, the other undisturbed', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const first = join(a, path, 'worker-1', { data: 'first' });
    await vi.waitUntil(() => first.seen.length > 0);
    const second = join(b, path, 'worker-1', { data: 'second' });
    await vi.waitUntil(() => second.state.error !== undefined);
    const error = second.state.error as DuplicateMemberError;
    expect(DuplicateMemberError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(DuplicateMemberError);
    expect(error).toMatchObject({
      code: 'DuplicateMember',
      path,
      id: 'worker-1',
      sessionId: a.sessionId,
    });
    expect(second.seen).toEqual([]);
    // Nothing of the second one's; the first is still a member with its own data.
    expect(await childrenOf(b, path)).toEqual(['worker-1']);
    expect((await b.promises.get(`${path}/worker-1`)).data.toString()).toBe('first');
    expect(first.state.error).toBeUndefined();
    // Once the first leaves, the id is free again.
    first.subscription.unsubscribe();
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 0);
    const third = join(b, path, 'worker-1', { data: 'third' });
    await vi.waitUntil(() => third.seen.length > 0);
    expect(third.latest()).toMatchObject([{ id: 'worker-1', data: 'third' }]);
  });

  it('joins again by itself after its session expired (a new node), and after its node was deleted', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const one = join(a, path, 'one');
    await vi.waitUntil(() => one.seen.length > 0);
    const two = join(b, path, 'two');
    await vi.waitUntil(() => two.latest()?.length === 2);
    const before = two.latest()?.find((member) => member.id === 'one') as MemberDetails;

    await expireSession(a);
    // `two` sees `one` go, then come back with a new node, on its new session.
    await vi.waitUntil(() => two.seen.some((list) => list.length === 1));
    await vi.waitUntil(() => two.latest()?.length === 2);
    expect(two.ids()).toEqual(['one', 'two']);
    const after = two.latest()?.find((member) => member.id === 'one') as MemberDetails;
    expect(after.sessionId).toBe(a.sessionId);
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(after.czxid).toBeGreaterThan(before.czxid);
    await vi.waitUntil(() => one.latest()?.length === 2);
    expect(one.ids()).toEqual(['one', 'two']);

    // An operator deletes its node: it joins again (with a new node; `two` may not see the
    // delete and the create apart: one listing can fall after both, see `watchMemberDetails`).
    await b.promises.delete(`${path}/one`);
    await vi.waitUntil(async () => {
      const stat = await b.promises.exists(`${path}/one`);
      return stat !== null && stat.czxid > after.czxid;
    });
    expect(one.state.error).toBeUndefined();
    expect((await b.promises.exists(`${path}/one`))?.ephemeralOwner).toBe(a.sessionId);
  });

  it('adopts its own node when the reply of its create was lost', async () => {
    const { a, proxy, observer, path, one } = await joinedWithReplyHeld();
    proxy.cut();
    proxy.holdReplies(false);
    await vi.waitUntil(() => one.seen.length > 0);
    expect(one.state.error).toBeUndefined();
    expect(one.latest()).toMatchObject([{ id: 'one', sessionId: a.sessionId }]);
    one.subscription.unsubscribe();
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 0);
  });

  it('completes when its client closes; a closed client is ClientClosed', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const one = join(a, path, 'one');
    const two = join(b, path, 'two');
    await vi.waitUntil(() => two.latest()?.length === 2);
    await a.close();
    expect(one.state).toEqual({ error: undefined, completed: true });
    await vi.waitUntil(() => two.latest()?.length === 1);
    const late = join(a, path, 'late');
    expect(late.state.error).toMatchObject({ code: 'ClientClosed' });
  });

  it.each([
    ['a relative path', 'workers', { id: 'w' }, 'InvalidPath'],
    ['the root', '/', { id: 'w' }, 'InvalidPath'],
    ['an empty segment', '/fleet//workers', { id: 'w' }, 'InvalidPath'],
    [
      'a path inside a lock node',
      '/fleet/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001/x',
      { id: 'w' },
      'InvalidPath',
    ],
    ['no options', '/fleet/workers', undefined, 'BadArguments'],
    ['no id', '/fleet/workers', {}, 'BadArguments'],
    ['an empty id', '/fleet/workers', { id: '' }, 'BadArguments'],
    ['an id with a slash', '/fleet/workers', { id: 'a/b' }, 'BadArguments'],
    ['an id "."', '/fleet/workers', { id: '.' }, 'BadArguments'],
    ['an id with a control character', '/fleet/workers', { id: 'a\u0001' }, 'BadArguments'],
    ['a number as id', '/fleet/workers', { id: 7 }, 'BadArguments'],
    ['data that is not text', '/fleet/workers', { id: 'w', data: 42 }, 'BadArguments'],
    [
      'details that is not a boolean',
      '/fleet/workers',
      { id: 'w', details: 'yes' },
      'BadArguments',
    ],
    ['data over 1 MiB', '/fleet/workers', { id: 'w', data: 'x'.repeat(2 ** 20) }, 'BadArguments'],
  ])('refuses %s with a typed error before sending anything', async (_, path, options, code) => {
    const client = await connectedClient();
    const before = await client.promises.children('/');
    const errors: unknown[] = [];
    members(client, path as string, options as never).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    expect(errors).toHaveLength(1);
    expect(ZkError.isInstance(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ code });
    expect(await client.promises.children('/')).toEqual(before);
  });

  it('refuses something that is not a client', () => {
    const errors: unknown[] = [];
    members({} as never, '/fleet/workers', { id: 'w' }).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    expect(errors[0]).toMatchObject({ code: 'BadArguments' });
  });
});
