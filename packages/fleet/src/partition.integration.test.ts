/**
 * `partition` against a real ZooKeeper, one test per rule, each written to fail when the rule
 * breaks: ownership only while the item's lock is held (checked from another session at each
 * emission), out of the assignment before the lock is released (checked at each delete sent),
 * tokens rising per item, balance, moves counted against the minimum, items that stay never
 * interrupted, a dead member's items taken over, item set changes, suspension, bad input and
 * clean-up.
 */
import type { ZkClient } from '@zkrx/core';
import { ZkError } from '@zkrx/core';
import { sortChildren } from '@zkrx/lock/recipe';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  proxiedClient,
  reapingClients,
  untilEmpty,
  untilGone,
} from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { BehaviorSubject, firstValueFrom, Subject } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  converged,
  type FleetMember,
  fleetLog,
  handlesOf,
  moved,
  names,
  ownersOf,
  startMember,
} from '../test/fleet';
import {
  DuplicateMemberError,
  type OwnedItem,
  OwnershipEndedError,
  partition,
  validatePartition,
} from './index';

/** Reads, from `observer`'s session, who holds the lock of `item`: the first node and its owner. */
async function lockHolder(observer: ZkClient, path: string, item: string) {
  const lockPath = `${path}/items/${item}`;
  const first = sortChildren(await childrenOf(observer, lockPath))[0];
  if (!first) return undefined;
  const node = `${lockPath}/${first.name}`;
  const stat = await observer.promises.exists(node);
  return stat ? { node, sessionId: stat.ephemeralOwner, czxid: stat.czxid } : undefined;
}

describe('partition', () => {
  it('an item is emitted only while its lock is held: checked from another session at every emission', async () => {
    const clients = await connectedClients(5);
    const observer = clients.pop() as ZkClient;
    const path = uniqueRoot('fleet');
    const items = names('shard', 12);
    const log = fleetLog();
    const problems: string[] = [];
    let checks = 0;
    // At each emission, for each item added: the item's lock, read by another session, is held
    // by this member's session with this very node and token. The check is tracked on the item,
    // so the item cannot be released (and moved) before it has read.
    const check = (
      assignment: { added: readonly string[]; owned: ReadonlyMap<string, OwnedItem> },
      member: FleetMember,
    ) => {
      for (const item of assignment.added) {
        const owned = assignment.owned.get(item) as OwnedItem;
        owned.track(
          lockHolder(observer, path, item).then((holder) => {
            checks += 1;
            if (
              holder === undefined ||
              holder.sessionId !== member.client.sessionId ||
              holder.node !== owned.node ||
              holder.czxid !== owned.fencingToken
            ) {
              problems.push(
                `${member.id} emitted ${item} (node ${owned.node}) while the lock showed ${JSON.stringify(holder)}`,
              );
            }
          }),
        );
      }
    };
    const [a, b, c, d] = clients as [ZkClient, ZkClient, ZkClient, ZkClient];
    const fleet = [
      startMember(log, a, path, items, { id: 'a' }, check),
      startMember(log, b, path, items, { id: 'b' }, check),
      startMember(log, c, path, items, { id: 'c' }, check),
    ];
    await vi.waitUntil(() => problems.length > 0 || converged(fleet, items));
    expect(problems).toEqual([]);
    fleet.push(startMember(log, d, path, items, { id: 'd' }, check));
    await vi.waitUntil(() => problems.length > 0 || converged(fleet, items));
    expect(problems).toEqual([]);
    fleet[1]?.stop();
    await vi.waitUntil(() => problems.length > 0 || converged(fleet, items));
    expect(problems).toEqual([]);
    // 12 to start with, 3 taken by d, 3 of b's handed out (each read once its emission came).
    await vi.waitUntil(() => checks >= 12 + 3 + 3);
    expect(problems).toEqual([]);
    expect(log.violations).toEqual([]);
  });

  it('an item leaves the assignment (signal aborted, emission without it) before its lock node is deleted', async () => {
    const clients = await connectedClients(4);
    const path = uniqueRoot('fleet');
    const items = names('shard', 8);
    const log = fleetLog();
    const problems: string[] = [];
    let deletes = 0;
    const fleet: FleetMember[] = [];
    // Every delete a member sends is seen as it is sent: if it is one of its items' lock nodes,
    // the member must already have emitted an assignment without that item, its signal aborted.
    const watchDeletes = (client: ZkClient, id: string) => {
      const original = client.promises.delete.bind(client.promises);
      client.promises.delete = (node: string, version?: number) => {
        const member = fleet.find((candidate) => candidate.id === id);
        const owned = member?.assignments
          .flatMap((assignment) => [...assignment.owned.values()])
          .find((candidate) => candidate.node === node);
        if (member && owned) {
          deletes += 1;
          // (A member that unsubscribed has no one to emit to: its signals say it.)
          const listed = member.latest()?.owned.get(owned.item)?.node === node;
          if (!member.subscription.closed && listed) {
            problems.push(`${id} deleted ${node} while its assignment still had ${owned.item}`);
          }
          if (!owned.signal.aborted) {
            problems.push(`${id} deleted ${node} before aborting its signal`);
          }
        }
        return original(node, version);
      };
    };
    for (const [index, client] of clients.entries()) watchDeletes(client, `m${index}`);
    for (const [index, client] of clients.slice(0, 3).entries()) {
      fleet.push(startMember(log, client, path, items, { id: `m${index}` }));
    }
    await vi.waitUntil(() => converged(fleet, items));
    fleet.push(startMember(log, clients[3] as ZkClient, path, items, { id: 'm3' }));
    await vi.waitUntil(() => converged(fleet, items));
    fleet[0]?.stop();
    await vi.waitUntil(() => converged(fleet, items));
    expect(deletes).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    expect(log.violations).toEqual([]);
  });

  it('3 → 4 → 3 members over 12 items: balanced, the fewest moves, tokens rising, items that stay untouched', async () => {
    const [a, b, c, d, observer] = (await connectedClients(5)) as ZkClient[];
    const path = uniqueRoot('fleet');
    const items = names('shard', 12);
    const log = fleetLog();
    const fleet = [
      startMember(log, a as ZkClient, path, items, { id: 'a', data: 'host-a:1' }),
      startMember(log, b as ZkClient, path, items, { id: 'b' }),
      startMember(log, c as ZkClient, path, items, { id: 'c' }),
    ];
    await vi.waitUntil(() => converged(fleet, items));
    const three = ownersOf(fleet);
    expect([...three.values()].filter((id) => id === 'a')).toHaveLength(4);
    const handles = handlesOf(fleet);
    // Every item's lock holds the owner's id as data.
    const item = items[0] as string;
    const holder = await lockHolder(observer as ZkClient, path, item);
    expect(
      (await (observer as ZkClient).promises.get(holder?.node as string)).data.toString(),
    ).toBe(three.get(item));

    // A member joins: it takes one item from each (the minimum: 12/4 = 3 for it).
    fleet.push(startMember(log, d as ZkClient, path, items, { id: 'd' }));
    await vi.waitUntil(() => converged(fleet, items));
    const four = ownersOf(fleet);
    const joinMoves = moved(three, four);
    expect(joinMoves).toHaveLength(3);
    expect(joinMoves.every((moving) => four.get(moving) === 'd')).toBe(true);
    for (const [kept, owned] of handles) {
      if (joinMoves.includes(kept)) {
        expect(owned.signal.aborted).toBe(true);
        expect(owned.signal.reason).toMatchObject({ reason: 'moved', item: kept, path });
        expect(OwnershipEndedError.isInstance(owned.signal.reason)).toBe(true);
      } else {
        // Never interrupted: the same handle, signal untouched.
        expect(owned.signal.aborted).toBe(false);
        expect(handlesOf(fleet).get(kept)).toBe(owned);
      }
    }

    // A member leaves: only its 3 items move, to the 3 others, one each.
    const handlesBefore = handlesOf(fleet);
    fleet[1]?.stop();
    await vi.waitUntil(() => converged(fleet, items));
    const after = ownersOf(fleet);
    const leaveMoves = [...four].filter(([, owner]) => owner === 'b').map(([gone]) => gone);
    expect(leaveMoves).toHaveLength(3);
    expect(moved(new Map([...four].filter(([, owner]) => owner !== 'b')), after)).toEqual([]);
    for (const [kept, owned] of handlesBefore) {
      if (leaveMoves.includes(kept)) expect(owned.signal.reason).toMatchObject({ reason: 'left' });
      else expect(owned.signal.aborted).toBe(false);
    }
    expect(new Set(leaveMoves.map((gone) => after.get(gone)))).toEqual(new Set(['a', 'c', 'd']));
    // Each item's tokens rose from owner to owner; no item was in two assignments at once.
    expect(log.violations).toEqual([]);
    for (const moving of [...joinMoves, ...leaveMoves]) {
      expect((log.history.get(moving) ?? []).length).toBeGreaterThanOrEqual(2);
    }
    // The membership, as the server has it.
    expect(await childrenOf(observer as ZkClient, `${path}/members`)).toEqual(['a', 'c', 'd']);
  });

  it("a dead member's items are taken over once its session expires; it comes back and the fleet rebalances", async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const { client: c, proxy } = await proxiedClient({ sessionTimeoutMs: 2_000 });
    const path = uniqueRoot('fleet');
    const items = names('shard', 9);
    const log = fleetLog();
    const fleet = [
      startMember(log, a, path, items, { id: 'a' }),
      startMember(log, b, path, items, { id: 'b' }),
      startMember(log, c, path, items, { id: 'c' }),
    ];
    await vi.waitUntil(() => converged(fleet, items));
    const before = ownersOf(fleet);
    const handles = handlesOf(fleet);
    const ofC = [...before].filter(([, owner]) => owner === 'c').map(([item]) => item);
    expect(ofC).toHaveLength(3);

    // c is cut off (a dead process, as far as ZooKeeper can tell): its connection is suspended
    // first (it gives its items up at once), then its session expires on the server.
    proxy.pause();
    await vi.waitUntil(
      () => ofC.every((item) => ['a', 'b'].includes(ownersOf(fleet.slice(0, 2)).get(item) ?? '')),
      { timeout: 30_000 },
    );
    for (const item of ofC) {
      expect(handles.get(item)?.signal.reason).toMatchObject({ reason: 'suspended' });
    }
    for (const [item, owned] of handles) {
      if (!ofC.includes(item)) expect(owned.signal.aborted).toBe(false);
    }
    expect(log.violations).toEqual([]);

    // c is back, on a new session: it joins again, at the back, and gets its share.
    proxy.resume();
    await vi.waitUntil(() => converged(fleet, items), { timeout: 30_000 });
    expect(fleet[2]?.state.error).toBeUndefined();
    expect(log.violations).toEqual([]);
  });

  it('follows the item set: added items are placed, removed ones given up (reason removed), nothing else moves', async () => {
    const [a, b, observer] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const set = new BehaviorSubject<readonly string[]>(names('tenant', 4));
    const log = fleetLog();
    const fleet = [
      startMember(log, a, path, set, { id: 'a' }),
      startMember(log, b, path, set, { id: 'b' }),
    ];
    await vi.waitUntil(() => converged(fleet, set.value));
    const before = ownersOf(fleet);
    const handles = handlesOf(fleet);

    set.next(names('tenant', 8));
    await vi.waitUntil(() => converged(fleet, set.value));
    expect(moved(before, ownersOf(fleet))).toEqual([]);
    for (const owned of handles.values()) expect(owned.signal.aborted).toBe(false);

    // Remove two of a's and one of b's: 5 left, (3, 2) or (2, 3) is balanced, nothing moves.
    const ofA = [...ownersOf(fleet)].filter(([, owner]) => owner === 'a').map(([item]) => item);
    const ofB = [...ownersOf(fleet)].filter(([, owner]) => owner === 'b').map(([item]) => item);
    const removed = [ofA[0], ofA[1], ofB[0]] as string[];
    const full = ownersOf(fleet);
    const fullHandles = handlesOf(fleet);
    set.next(set.value.filter((item) => !removed.includes(item)));
    await vi.waitUntil(() => converged(fleet, set.value));
    expect(moved(full, ownersOf(fleet))).toEqual([]);
    for (const item of removed) {
      expect(fullHandles.get(item)?.signal.reason).toMatchObject({ reason: 'removed', item });
      await untilEmpty(observer, `${path}/items/${item}`);
    }
    expect(log.violations).toEqual([]);
  });

  it('a suspended connection gives every item up (reason suspended) and takes them again after; continue keeps them', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
    const { client: b, proxy: bProxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
    const pathA = uniqueRoot('fleet');
    const pathB = uniqueRoot('fleet');
    const items = names('shard', 3);
    const log = fleetLog();
    const released = startMember(log, a, pathA, items, { id: 'a' });
    const kept = startMember(fleetLog(), b, pathB, items, { id: 'b', onSuspended: 'continue' });
    await vi.waitUntil(() => converged([released], items) && converged([kept], items));
    const first = handlesOf([released]);
    const keptHandles = handlesOf([kept]);

    const emitted = released.assignments.length;
    proxy.cut();
    bProxy.cut();
    // (It may be back with every item before a poll: read its history, not its latest.)
    await vi.waitUntil(() =>
      released.assignments.slice(emitted).some((assignment) => assignment.items.length === 0),
    );
    for (const owned of first.values()) {
      expect(owned.signal.reason).toMatchObject({ reason: 'suspended' });
      expect(owned.signal.reason.cause).toMatchObject({ code: 'LockLost', reason: 'suspended' });
    }
    await vi.waitUntil(() => converged([released], items));
    for (const [item, owned] of handlesOf([released])) {
      expect(owned.fencingToken).toBeGreaterThan(first.get(item)?.fencingToken as number);
    }
    await vi.waitUntil(() => b.state === 'reconnected');
    expect(kept.items()).toEqual(items);
    for (const owned of keptHandles.values()) expect(owned.signal.aborted).toBe(false);
    expect(log.violations).toEqual([]);
  });

  it('a connection down for longer than the connect timeout does not end the partition', async () => {
    const a = await connectedClient();
    const { client: b, proxy } = await proxiedClient({
      sessionTimeoutMs: 8_000,
      connectTimeoutMs: 500,
    });
    const path = uniqueRoot('fleet');
    const items = names('shard', 4);
    const log = fleetLog();
    const fleet = [
      startMember(log, a, path, items, { id: 'a' }),
      startMember(log, b, path, items, { id: 'b' }),
    ];
    await vi.waitUntil(() => converged(fleet, items));
    const emitted = fleet[1]?.assignments.length as number;
    proxy.refuse(true);
    proxy.cut();
    // b gives its items up and queues for them again: each such wait ends with ConnectTimeout
    // after 500 ms while the proxy refuses. Wait for a few of those, well within the session.
    let timeouts = 0;
    const connected = b.connected.bind(b);
    b.connected = (timeoutMs?: number) =>
      connected(timeoutMs).catch((error: unknown) => {
        timeouts += 1;
        throw error;
      });
    await vi.waitUntil(() => timeouts >= 3);
    proxy.refuse(false);
    await vi.waitUntil(() => converged(fleet, items));
    expect(fleet[1]?.assignments.slice(emitted).some((x) => x.items.length === 0)).toBe(true);
    expect(fleet.map((member) => member.state.error)).toEqual([undefined, undefined]);
    expect(log.violations).toEqual([]);
  });

  it('a duplicate id is DuplicateMemberError; the first member keeps its items', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const items = names('shard', 2);
    const log = fleetLog();
    const first = startMember(log, a, path, items, { id: 'same' });
    await vi.waitUntil(() => converged([first], items));
    const second = startMember(log, b, path, items, { id: 'same' });
    await vi.waitUntil(() => second.state.error !== undefined);
    expect(DuplicateMemberError.isInstance(second.state.error)).toBe(true);
    expect(second.state.error).toMatchObject({
      path: `${path}/members`,
      id: 'same',
      sessionId: a.sessionId,
    });
    expect(second.assignments).toEqual([]);
    expect(first.items()).toEqual(items);
    for (const owned of handlesOf([first]).values()) expect(owned.signal.aborted).toBe(false);
  });

  it('unsubscribing and closing leave nothing behind: the containers are reaped', async () => {
    const [a, b, observer] = await reapingClients(3);
    const path = uniqueRoot('fleet');
    const items = names('job', 4);
    const log = fleetLog();
    const one = startMember(log, a as ZkClient, path, items, { id: 'one' });
    const two = startMember(log, b as ZkClient, path, items, { id: 'two' });
    await vi.waitUntil(() => converged([one, two], items));
    const handles = handlesOf([one, two]);
    one.stop();
    await (b as ZkClient).close();
    await vi.waitUntil(() => two.state.completed);
    for (const owned of handles.values()) {
      expect(owned.signal.aborted).toBe(true);
      expect(['left', 'closed', 'moved']).toContain(owned.signal.reason.reason);
    }
    await untilGone(observer as ZkClient, path);
  });

  it('waits for the runs tracked on an item before releasing it', async () => {
    const [a, b, observer] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const items = ['only'];
    const log = fleetLog();
    let finish: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const one = startMember(log, a, path, items, { id: 'one' }, (assignment) => {
      assignment.owned.get('only')?.runIfOwned(async (signal) => {
        await running;
        return signal.aborted;
      });
    });
    await vi.waitUntil(() => one.items().length === 1);
    const owned = one.latest()?.owned.get('only') as OwnedItem;
    one.stop();
    expect(owned.signal.reason).toMatchObject({ reason: 'left' });
    // Its run goes on: the lock is still held by one's node until it settles.
    const waiting = startMember(log, b, path, items, { id: 'two' });
    await vi.waitUntil(
      async () => (await childrenOf(observer, `${path}/members`)).join() === 'two',
    );
    expect((await lockHolder(observer, path, 'only'))?.node).toBe(owned.node);
    expect(waiting.items()).toEqual([]);
    finish();
    await vi.waitUntil(() => waiting.items().length === 1);
    expect(waiting.latest()?.owned.get('only')?.fencingToken).toBeGreaterThan(owned.fencingToken);
    expect(log.violations).toEqual([]);
  });

  it.each([
    ['a relative path', 'fleet', ['x'], { id: 'w' }, 'InvalidPath'],
    ['the root', '/', ['x'], { id: 'w' }, 'InvalidPath'],
    [
      'a path inside a lock node',
      '/f/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001',
      ['x'],
      { id: 'w' },
      'InvalidPath',
    ],
    ['no options', '/fleet/p', ['x'], undefined, 'BadArguments'],
    ['no id', '/fleet/p', ['x'], {}, 'BadArguments'],
    ['an id with a slash', '/fleet/p', ['x'], { id: 'a/b' }, 'BadArguments'],
    ['data that is not text', '/fleet/p', ['x'], { id: 'w', data: 1 }, 'BadArguments'],
    [
      'an unknown suspended policy',
      '/fleet/p',
      ['x'],
      { id: 'w', onSuspended: 'hope' },
      'BadArguments',
    ],
    ['items that are not an array', '/fleet/p', 'x', { id: 'w' }, 'BadArguments'],
    ['an item twice', '/fleet/p', ['x', 'y', 'x'], { id: 'w' }, 'BadArguments'],
    ['an empty item', '/fleet/p', [''], { id: 'w' }, 'BadArguments'],
    ['an item with a slash', '/fleet/p', ['a/b'], { id: 'w' }, 'BadArguments'],
    ['an item that is not text', '/fleet/p', [3], { id: 'w' }, 'BadArguments'],
    ['a reserved item', '/fleet/p', ['locks'], { id: 'w' }, 'BadArguments'],
    ['an item over 255 bytes', '/fleet/p', ['é'.repeat(128)], { id: 'w' }, 'BadArguments'],
    ['an item of 1 MB', '/fleet/p', ['x'.repeat(2 ** 20)], { id: 'w' }, 'BadArguments'],
    ['an id over 255 bytes', '/fleet/p', ['x'], { id: 'w'.repeat(256) }, 'BadArguments'],
    [
      'more than 100,000 items',
      '/fleet/p',
      Array.from({ length: 100_001 }, (_, at) => `i${at}`),
      { id: 'w' },
      'BadArguments',
    ],
    [
      'a releaseTimeoutMs that is not a number',
      '/fleet/p',
      ['x'],
      { id: 'w', releaseTimeoutMs: 'soon' },
      'BadArguments',
    ],
    [
      'an item named like a lock node',
      '/fleet/p',
      ['_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001'],
      { id: 'w' },
      'BadArguments',
    ],
  ])(
    'refuses %s with a typed error before sending anything',
    async (_, path, items, options, code) => {
      const client = await connectedClient();
      const before = await client.promises.children('/');
      const errors: unknown[] = [];
      partition(client, path as string, items as never, options as never).subscribe({
        next: () => errors.push('emitted'),
        error: (error: unknown) => errors.push(error),
      });
      expect(errors).toHaveLength(1);
      expect(ZkError.isInstance(errors[0])).toBe(true);
      expect(errors[0]).toMatchObject({ code });
      // The same check, up front.
      expect(() => validatePartition(path as string, items as never, options as never)).toThrow(
        expect.objectContaining({ code }),
      );
      expect(await client.promises.children('/')).toEqual(before);
    },
  );

  it('a bad item set later errors the partition after giving everything up and leaving', async () => {
    const [a, observer] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const set = new Subject<readonly string[]>();
    const log = fleetLog();
    const one = startMember(log, a, path, set, { id: 'one' });
    set.next(['p', 'q']);
    await vi.waitUntil(() => one.items().length === 2);
    const handles = handlesOf([one]);
    set.next(['p', 'p']);
    expect(one.state.error).toMatchObject({ code: 'BadArguments' });
    // Its last assignment is empty, emitted before the locks were released.
    expect(one.latest()?.items).toEqual([]);
    for (const owned of handles.values())
      expect(owned.signal.reason).toMatchObject({ reason: 'left' });
    await untilEmpty(observer, `${path}/members`);
    await untilEmpty(observer, `${path}/items/p`);
    await untilEmpty(observer, `${path}/items/q`);
  });

  it('refuses something that is not a client', async () => {
    await expect(
      firstValueFrom(partition({} as never, '/fleet/p', ['x'], { id: 'w' })),
    ).rejects.toMatchObject({ code: 'BadArguments' });
  });
});
