/**
 * joinPartition against a real ZooKeeper: the membership held at once (`joined`, `assignment`,
 * `assignment$`), joining again after a failure, a `leave()` that waits for the runs it
 * tracks (the item's lock released only after them), the client closing, and bad input.
 */
import { isZkError, ZkError, ZkErrorCode } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  deferred,
  untilGone,
} from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { filter, firstValueFrom, lastValueFrom, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  type Assignment,
  DuplicateMemberError,
  joinPartition,
  type OwnedItem,
  OwnershipEndedError,
  type PartitionMembership,
} from './index';

/** The first assignment of `membership` with `count` items (the first one may have none yet). */
function owning(membership: PartitionMembership, count: number): Promise<Assignment> {
  return firstValueFrom(
    membership.assignment$.pipe(filter((assignment) => assignment.items.length === count)),
  );
}

describe('joinPartition', () => {
  it('returns the membership at once; joined resolves at the first assignment; leave() completes it', async () => {
    const [client, observer] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const membership = joinPartition(client!, path, ['a', 'b', 'c'], { id: 'one', data: 'here' });
    expect(membership.assignment).toBeUndefined();
    await membership.joined;
    expect(membership.assignment?.poisoned.size).toBe(0);
    expect(await childrenOf(observer!, `${path}/members`)).toEqual(['one']);
    await owning(membership, 3);
    expect(membership.assignment?.items).toEqual(['a', 'b', 'c']);
    // Late subscribers get the latest at once.
    expect((await firstValueFrom(membership.assignment$)).items).toEqual(['a', 'b', 'c']);
    const owned = [...(membership.assignment?.owned.values() ?? [])];
    const all = lastValueFrom(membership.assignment$.pipe(toArray()));

    await membership.leave();
    await membership.leave(); // idempotent
    expect(membership.assignment).toBeUndefined();
    expect((await all).map(({ items }) => items)).toContainEqual(['a', 'b', 'c']);
    for (const item of owned) {
      expect(OwnershipEndedError.isInstance(item.signal.reason)).toBe(true);
      expect(item.signal.reason).toMatchObject({ reason: 'left' });
    }
    await untilGone(observer!, `${path}/members/one`);
  });

  it('a duplicate id fails joined, then joins again and gets the items once the other member left', async () => {
    const [a, b] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const items = ['p', 'q'];
    const first = joinPartition(a!, path, items, { id: 'same' });
    await owning(first, 2);
    const second = joinPartition(b!, path, items, { id: 'same', retryDelayMs: 10 });
    const failure = await second.joined.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(DuplicateMemberError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ id: 'same', sessionId: a!.sessionId });
    expect(second.assignment).toBeUndefined();
    expect(first.assignment?.items).toEqual(items);

    const taken = owning(second, 2);
    await first.leave();
    expect((await taken).items).toEqual(items);
    expect(second.assignment?.items).toEqual(items);
    await second.leave();
  });

  it('a hot item set is subscribed once: after a failure to join, the retry still has it', async () => {
    const [a, b] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const blocker = joinPartition(b!, path, ['x', 'y'], { id: 'same' });
    await blocker.joined;
    const items = new Subject<readonly string[]>();
    const membership = joinPartition(a!, path, items, { id: 'same', retryDelayMs: 0 });
    items.next(['x', 'y']); // emitted once, while the first attempt is under way
    await expect(membership.joined).rejects.toBeInstanceOf(DuplicateMemberError);
    await blocker.leave();
    await owning(membership, 2);
    expect(membership.assignment?.items).toEqual(['x', 'y']);
    await membership.leave();
  });

  it('a default id is new for each process: host name, pid and a random part', async () => {
    const [client] = await connectedClients(1);
    const path = uniqueRoot('fleet');
    const membership = joinPartition(client!, path, ['x']);
    await membership.joined;
    const [id] = (await childrenOf(client!, `${path}/members`)) as [string];
    expect(id).toMatch(new RegExp(`^[^:]+:${process.pid}:[0-9a-f]{8}$`));
    await membership.leave();
  });

  it('leave() resolves once a tracked run settled, and the item lock goes only after it', async () => {
    const [client, observer] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const membership = joinPartition(client!, path, ['only'], { id: 'one' });
    await owning(membership, 1);
    const owned = membership.assignment?.owned.get('only') as OwnedItem;
    const gate = deferred();
    let runSettled = false;
    membership.track(owned.track(gate.promise.then(() => (runSettled = true))));

    let leftAt: boolean | undefined;
    const leaving = membership.leave().then(() => (leftAt = runSettled));
    // Given up at once: the signal aborts and nothing is owned...
    expect(owned.signal.reason).toMatchObject({ reason: 'left' });
    expect(membership.assignment).toBeUndefined();
    // ...but the item's lock node stays while the run goes on, and leave() waits.
    let goneAt: boolean | undefined;
    const gone = untilGone(observer!, owned.node).then(() => (goneAt = runSettled));
    expect(await observer!.promises.exists(owned.node)).not.toBeNull();
    expect(leftAt).toBeUndefined();

    gate.resolve();
    await leaving;
    await gone;
    expect(leftAt).toBe(true);
    expect(goneAt).toBe(true);
  });

  it('leave() before the first assignment rejects joined with ClientClosed', async () => {
    const client = await connectedClient();
    const membership = joinPartition(client, uniqueRoot('fleet'), ['x'], { id: 'one' });
    const leaving = membership.leave();
    await expect(membership.joined).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.ClientClosed),
    );
    await leaving;
  });

  it('completes when the client closes', async () => {
    const client = await connectedClient();
    const membership = joinPartition(client, uniqueRoot('fleet'), ['x'], { id: 'one' });
    await owning(membership, 1);
    const all = lastValueFrom(membership.assignment$.pipe(toArray()));
    await client.close();
    expect((await all).map(({ items }) => items)).toContainEqual(['x']);
    expect(membership.assignment).toBeUndefined();
    await membership.leave();
  });

  it.each([
    ['not a client', {}, '/fleet/p', ['x'], { id: 'w' }, 'BadArguments'],
    ['a relative path', undefined, 'fleet', ['x'], { id: 'w' }, 'InvalidPath'],
    ['options that are not an object', undefined, '/fleet/p', ['x'], 'w', 'BadArguments'],
    ['an id with a slash', undefined, '/fleet/p', ['x'], { id: 'a/b' }, 'BadArguments'],
    [
      'an unknown suspended policy',
      undefined,
      '/fleet/p',
      ['x'],
      { onSuspended: 'hope' },
      'BadArguments',
    ],
    ['an item twice', undefined, '/fleet/p', ['x', 'x'], {}, 'BadArguments'],
    ['items that are not an array', undefined, '/fleet/p', 'x', {}, 'BadArguments'],
    ['a negative retryDelayMs', undefined, '/fleet/p', ['x'], { retryDelayMs: -1 }, 'BadArguments'],
    [
      'a retryDelayMs that is not a number',
      undefined,
      '/fleet/p',
      ['x'],
      { retryDelayMs: '1' },
      'BadArguments',
    ],
    [
      'an infinite retryDelayMs',
      undefined,
      '/fleet/p',
      ['x'],
      { retryDelayMs: Infinity },
      'BadArguments',
    ],
  ])(
    'refuses %s with a typed error, sending nothing',
    async (_, notClient, path, items, options, code) => {
      const client = await connectedClient();
      const before = await childrenOf(client, '/');
      let thrown: unknown;
      try {
        joinPartition((notClient ?? client) as never, path, items as never, options as never);
      } catch (error) {
        thrown = error;
      }
      expect(ZkError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code });
      expect(await childrenOf(client, '/')).toEqual(before);
    },
  );
});
