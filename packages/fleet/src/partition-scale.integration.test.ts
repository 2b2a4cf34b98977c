/**
 * `partition` at the next order of scale (issue 32), against a real ZooKeeper: a change costs
 * only the members whose items change (each reads its own assignment node, nobody else watches
 * the membership but the coordinator), each member is assigned from the item set it states (a
 * rolling deploy that changes the set keeps every item of both sets owned), and the stored sets
 * are written once and taken over when their writer goes.
 */
import { randomBytes } from 'node:crypto';
import type { ZkClient } from '@zkrx/core';
import { type Lease, mutex } from '@zkrx/lock';
import { connectedClients, countedClient } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { BehaviorSubject } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { converged, type FleetMember, fleetLog, names, startMember } from '../test/fleet';
import { inspectFleet } from './index';
import { checkItemSet } from './item-set';
import { itemPath } from './options';
import { SetKeeper, SetReader } from './set-store';

/** What the live members own now, each item with its owners. */
function ownersNow(fleet: readonly FleetMember[]): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const member of fleet) {
    if (member.subscription.closed) continue;
    for (const item of member.items()) owners.set(item, [...(owners.get(item) ?? []), member.id]);
  }
  return owners;
}

describe('partition at scale', () => {
  it('a join costs the members whose items stay nothing: no notification, so no read', async () => {
    const path = uniqueRoot('fleet');
    const items = names('item', 5);
    const log = fleetLog();
    const counted = await Promise.all(Array.from({ length: 5 }, () => countedClient()));
    const [newcomer, observer] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const fleet = counted.map(({ client }, index) =>
      startMember(log, client, path, items, { id: `m${index}` }),
    );
    await vi.waitUntil(() => converged(fleet, items));
    const coordinator = (await inspectFleet(observer, path))?.coordinator;
    // What each member's own start sent (its record's last write) has been answered.
    for (const { client } of counted) await client.promises.sync(path);
    const before = counted.map(({ packets }) => packets.notifications);
    // A sixth member: 5 items over 6 members, nobody gives anything up (each keeps its one).
    const sixth = startMember(log, newcomer, path, items, { id: 'm5' });
    await vi.waitUntil(async () => {
      const node = await observer.promises.exists(`${path}/assignments/m5`);
      return (node?.version ?? 0) > 0;
    });
    // Everything the coordinator sent is applied (its session's order), and every member's
    // client has heard what ZooKeeper had for it (one round trip of its own).
    const coordinating = counted[fleet.findIndex((member) => member.id === coordinator)];
    await coordinating?.client.promises.sync(path);
    for (const { client } of counted) await client.promises.sync(path);
    expect(sixth.items()).toEqual([]);
    for (const [at, { packets }] of counted.entries()) {
      if (fleet[at]?.id === coordinator) continue;
      // Not a notification: no membership listing, no assignment read (a change reaches a
      // member only through a watch of its own; its item locks' own timers may send a read).
      expect(packets.notifications - (before[at] as number)).toBe(0);
    }
    expect(log.violations).toEqual([]);
  });

  it('a rolling deploy that adds an item: every item of both sets stays owned, the old coordinator last', async () => {
    const path = uniqueRoot('fleet');
    const old = names('item', 30);
    const next = [...old, 'item-30'];
    const clients = (await connectedClients(7)) as ZkClient[];
    const observer = clients.pop() as ZkClient;
    const log = fleetLog();
    const fleet = [0, 1, 2].map((at) =>
      startMember(log, clients[at] as ZkClient, path, old, { id: `old-${at}` }),
    );
    await vi.waitUntil(() => converged(fleet, old));
    const coordinator = (await inspectFleet(observer, path))?.coordinator as string;
    // Replace the members one at a time, the coordinator last (as a deploy does).
    const order = fleet
      .map((member) => member.id)
      .sort((a, b) => {
        if (a === coordinator) return 1;
        if (b === coordinator) return -1;
        return a < b ? -1 : 1;
      });
    for (const [step, id] of order.entries()) {
      const leaving = fleet.find((member) => member.id === id) as FleetMember;
      leaving.stop();
      fleet.push(
        startMember(log, clients[3 + step] as ZkClient, path, next, { id: `new-${step}` }),
      );
      const live = fleet.filter((member) => !member.subscription.closed);
      const states = (item: string) =>
        live.filter((member) => (member.id.startsWith('new') ? next : old).includes(item));
      // Once the step settles: every item some live member lists is owned by one of those, once.
      await vi.waitUntil(() => {
        const owners = ownersNow(fleet);
        return next.every((item) => {
          const listers = states(item);
          const owner = owners.get(item) ?? [];
          if (listers.length === 0) return owner.length === 0;
          return owner.length === 1 && listers.some((member) => member.id === owner[0]);
        });
      });
    }
    // All new: balanced over the new set, the item no live member listed first is now owned.
    await vi.waitUntil(() => converged(fleet, next));
    expect(log.violations).toEqual([]);
  });

  it('an item only some members list goes to one of them; one no live member lists is given up', async () => {
    const path = uniqueRoot('fleet');
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const mine = new BehaviorSubject<readonly string[]>(['both-1', 'both-2', 'only-a']);
    const log = fleetLog();
    const first = startMember(log, a, path, mine, { id: 'a' });
    const second = startMember(log, b, path, ['both-1', 'both-2', 'only-b'], { id: 'b' });
    await vi.waitUntil(() => {
      const owners = ownersNow([first, second]);
      return (
        owners.get('only-a')?.join() === 'a' &&
        owners.get('only-b')?.join() === 'b' &&
        owners.get('both-1')?.length === 1 &&
        owners.get('both-2')?.length === 1
      );
    });
    // `a` drops `only-a`: nobody lists it any more, nobody owns it.
    mine.next(['both-1', 'both-2']);
    await vi.waitUntil(() => !ownersNow([first, second]).has('only-a'));
    expect(first.latest()?.removed).toContain('only-a');
    expect(log.violations).toEqual([]);
  });

  it('a stored set is written once, read back whole (in several chunks), and taken over when its writer goes', async () => {
    const path = uniqueRoot('fleet');
    const [a, b, c] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    // 5,000 names of 255 barely compressible bytes: about 1.3 MB, two chunks or more.
    const items = Array.from({ length: 5_000 }, () =>
      randomBytes(128).toString('hex').slice(0, 255),
    );
    const set = checkItemSet(items, path, 'partition');
    const failures: unknown[] = [];
    const first = new SetKeeper(a, path, (error) => failures.push(error));
    const second = new SetKeeper(b, path, (error) => failures.push(error));
    first.keep(set);
    second.keep(set);
    let found = 0;
    const reader = new SetReader(
      c,
      path,
      () => (found += 1),
      (error) => failures.push(error),
    );
    reader.need(new Set([set.digest]));
    await vi.waitUntil(() => reader.get(set.digest) !== undefined);
    expect(reader.get(set.digest)?.items).toEqual(set.items);
    // Stored once: one claim and its chunks, all of one session.
    const stored = await c.promises.children(`${path}/sets`);
    const owners = new Set(
      await Promise.all(
        stored.map(
          async (name) => (await c.promises.exists(`${path}/sets/${name}`))?.ephemeralOwner,
        ),
      ),
    );
    expect(owners.size).toBe(1);
    expect(stored.length).toBeGreaterThan(2);
    // Its writer goes: the other keeper stores it again, whole.
    const writer = owners.has(a.sessionId) ? first : second;
    const other = writer === first ? b : a;
    writer.stop();
    await vi.waitUntil(async () => {
      const head = await c.promises.exists(`${path}/sets/${set.digest}`);
      return head !== null && head.ephemeralOwner === other.sessionId && head.version > 0;
    });
    const again = new SetReader(
      c,
      path,
      () => {},
      (error) => failures.push(error),
    );
    again.need(new Set([set.digest]));
    await vi.waitUntil(() => again.get(set.digest) !== undefined);
    expect(again.get(set.digest)?.items).toEqual(set.items);
    first.stop();
    second.stop();
    reader.stop();
    again.stop();
    expect(found).toBe(1);
    expect(failures).toEqual([]);
  });

  it('a share over the 128 items a member queues for at once is owned whole, also after held items come free', async () => {
    const path = uniqueRoot('fleet');
    const items = Array.from({ length: 300 }, (_, at) => `item-${String(at).padStart(3, '0')}`);
    const [holder, first, second] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    // Another session holds the first 200 items' locks (more than a member queues for at once):
    // a member's first 128 waits are all on them.
    const held = items.slice(0, 200);
    const leases: Lease[] = [];
    const holding = held.map((item) =>
      mutex(holder, itemPath(path, item), { data: 'holder' }).subscribe((lease) => {
        leases.push(lease);
      }),
    );
    await vi.waitUntil(() => leases.length === held.length, { timeout: 60_000 });
    const log = fleetLog();
    const alone = startMember(log, first, path, items, { id: 'm0' });
    // Its node says it was given all 300: the coordinator wrote it.
    await vi.waitUntil(
      async () => ((await first.promises.exists(`${path}/assignments/m0`))?.version ?? 0) > 0,
      { timeout: 30_000 },
    );
    await first.promises.sync(path);
    // Never an item the holder has (the locks alone decide).
    expect(alone.items().filter((item) => held.includes(item))).toEqual([]);
    for (const subscription of holding) subscription.unsubscribe();
    // Once they are free, the whole share: 300 items, 172 more than it queues for at once.
    await vi.waitUntil(() => converged([alone], items), { timeout: 60_000 });
    // A second member: 150 each, each share over the bound too.
    const fleet = [alone, startMember(log, second, path, items, { id: 'm1' })];
    await vi.waitUntil(() => converged(fleet, items), { timeout: 60_000 });
    expect(log.violations).toEqual([]);
  });
});
