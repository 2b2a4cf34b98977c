/**
 * `partition` against a real ZooKeeper where issue 25 found it wanting, one test per fault,
 * each written to fail on the partitioner before it: two members on one client, a member whose
 * item set comes late, a poison item, runs tracked after the end or never ending, and what the
 * fleet keeps on the server (no watch per item per member).
 */
import type { ZkClient } from '@zkrx/core';
import { childrenOf, connectedClients, deferred } from '@zkrx/test-support';
import { mntr, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { Subject } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  converged,
  fleetLog,
  names,
  refusedLockPath,
  startMember,
  startMembers,
} from '../test/fleet';
import { inspectFleet, type OwnedItem, OwnershipEndedError, ReleaseTimeoutError } from './index';

describe('partition (issue 25)', () => {
  it('two members with different ids on one client each own their share', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const path = uniqueRoot('fleet');
    const items = names('item', 4);
    const log = fleetLog();
    const fleet = [
      startMember(log, a, path, items, { id: 'x' }),
      startMember(log, a, path, items, { id: 'y' }),
    ];
    await vi.waitUntil(() => converged(fleet, items));
    expect(fleet.map((member) => member.items().length)).toEqual([2, 2]);
    expect(log.violations).toEqual([]);
  });

  it('a member joins only once it knows its item set; then it takes its share', async () => {
    const [a, b, observer] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const items = names('item', 4);
    const log = fleetLog();
    const first = startMember(log, a, path, items, { id: 'a' });
    await vi.waitUntil(() => first.items().length === 4);
    const late = new Subject<readonly string[]>();
    const second = startMember(log, b, path, late, { id: 'b' });
    // Whatever it would have sent on subscribing has reached the server after this round trip
    // of its own session: it is not a member, and the first keeps every item.
    await b.promises.sync(path);
    expect(await childrenOf(observer, `${path}/members`)).toEqual(['a']);
    expect(first.items()).toHaveLength(4);
    late.next(items);
    await vi.waitUntil(() => converged([first, second], items));
    expect(log.violations).toEqual([]);
  });

  it('a poison item is reported and left unowned; the fleet goes on without it', async () => {
    const [a, b, observer] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    // Nobody may make a lock node under this item's lock path: every lock on it fails NoAuth.
    await refusedLockPath(observer, path, 'bad');
    const items = ['a', 'bad', 'c', 'd'];
    const good = ['a', 'c', 'd'];
    const log = fleetLog();
    const fleet = startMembers(log, [a, b], path, items, ['one', 'two']);
    await vi.waitUntil(
      () =>
        converged(fleet, good) &&
        fleet.some((member) => member.latest()?.poisoned.has('bad') === true),
    );
    // The member that found it lists it (the other does not: each lists what it found).
    const finder = fleet.find((member) => member.latest()?.poisoned.has('bad'));
    expect(finder?.latest()?.poisoned.get('bad')).toMatchObject({
      member: finder?.id,
      code: 'NoAuth',
    });
    for (const member of fleet) expect(member.state.error).toBeUndefined();
    const fleetView = await inspectFleet(observer, path);
    expect(fleetView?.poisoned).toEqual([expect.objectContaining({ item: 'bad', code: 'NoAuth' })]);
    for (const member of fleet) member.stop();
    await observer.promises.delete(`${path}/items/bad`);
    expect(log.violations).toEqual([]);
  });

  it('track() after the end throws; a run that never settles is bounded by releaseTimeoutMs', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const items = ['x', 'y'];
    const log = fleetLog();
    const hung = startMember(log, a, path, items, { id: 'hung', releaseTimeoutMs: 200 });
    await vi.waitUntil(() => hung.items().length === 2);
    const handles = [...(hung.latest()?.owned.values() ?? [])] as OwnedItem[];
    // A run that ignores its signal.
    for (const owned of handles) owned.track(new Promise(() => {}));
    const other = startMember(log, b, path, items, { id: 'other' });
    // One of the two moves: its signal aborts, then nothing may be tracked on it any more...
    await vi.waitUntil(() => handles.some((owned) => owned.signal.aborted));
    const moved = handles.find((owned) => owned.signal.aborted) as OwnedItem;
    expect(() => moved.track(Promise.resolve())).toThrow(OwnershipEndedError);
    // ... and the hung run pins it only until the bound: the member leaves, the other takes all.
    await vi.waitUntil(() => hung.state.error !== undefined);
    expect(ReleaseTimeoutError.isInstance(hung.state.error)).toBe(true);
    expect(hung.state.error).toMatchObject({ path, item: moved.item, waitedMs: 200 });
    await vi.waitUntil(() => other.items().length === 2);
    expect(log.violations).toEqual([]);
  });

  it('client.close() tells the items at once and releases each only after its tracked runs', async () => {
    const [a, b] = (await connectedClients(2, { closeTimeoutMs: 60_000 })) as [ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const log = fleetLog();
    const first = startMember(log, a, path, ['only'], { id: 'first' });
    await vi.waitUntil(() => first.items().length === 1);
    const owned = first.latest()?.owned.get('only') as OwnedItem;
    const gate = deferred();
    let settled = false;
    owned.track(gate.promise.then(() => (settled = true)));
    let settledAtHandOver: boolean | undefined;
    const second = startMember(log, b, path, ['only'], { id: 'second' }, (assignment) => {
      if (assignment.added.includes('only')) settledAtHandOver = settled;
    });
    await vi.waitUntil(async () => (await childrenOf(b, `${path}/members`)).length === 2);
    const closing = a.close();
    // Told at once, while close waits: the run can stop before the session (and its lock) go.
    expect(owned.signal.reason).toMatchObject({ reason: 'closed' });
    // The member has left (its node deleted), but the item's lock is held while its run goes on.
    await vi.waitUntil(async () => (await childrenOf(b, `${path}/members`)).length === 1);
    expect(await b.promises.exists(owned.node)).not.toBeNull();
    gate.resolve();
    await vi.waitUntil(() => second.items().length === 1);
    expect(settledAtHandOver).toBe(true);
    await closing;
    expect(log.violations).toEqual([]);
  });

  it('keeps at most 2n + m² watches on the server: none per item per member', async () => {
    const server = await testZooKeeper();
    const clients = (await connectedClients(4)) as ZkClient[];
    const path = uniqueRoot('fleet');
    const items = names('item', 24);
    const log = fleetLog();
    const before = (await mntr(server.connectString)).zk_watch_count as number;
    const fleet = clients.map((client, index) =>
      startMember(log, client, path, items, { id: `m${index}` }),
    );
    await vi.waitUntil(() => converged(fleet, items));
    const watches = ((await mntr(server.connectString)).zk_watch_count as number) - before;
    // Each owner watches its lock node (24), each member the members' node twice (8), and the
    // coordinator's queue one node each: 35 or so. Watching every item's lock costs 4 × 24 more.
    expect(watches).toBeLessThanOrEqual(2 * items.length + fleet.length ** 2);
    expect(log.violations).toEqual([]);
  });
});
