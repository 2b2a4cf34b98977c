/**
 * `inspectFleet` against a real ZooKeeper: a partition's members, owners, tokens and waiters; a
 * plain membership group; nothing at the path; bad input.
 */
import type { ZkClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { connectedClients } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { converged, fleetLog, handlesOf, names, startMember } from '../test/fleet';
import { inspectFleet, members } from './index';

describe('inspectFleet', () => {
  it('reads a partition: members in join order with their items, owners with tokens, waiters', async () => {
    const [a, b, outsider] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    const items = names('shard', 4);
    const log = fleetLog();
    const first = startMember(log, a, path, items, { id: 'a', data: 'host-a' });
    await vi.waitUntil(() => first.items().length === 4);
    const second = startMember(log, b, path, items, { id: 'b' });
    await vi.waitUntil(() => converged([first, second], items));

    const fleet = await inspectFleet(a, path);
    expect(fleet).toMatchObject({ path, kind: 'partition', membersPath: `${path}/members` });
    expect(fleet?.balanced).toBe(true);
    expect(fleet?.members).toMatchObject([
      { id: 'a', data: 'host-a', sessionId: a.sessionId, ownSession: true, items: first.items() },
      { id: 'b', data: '', sessionId: b.sessionId, ownSession: false, items: second.items() },
    ]);
    const handles = handlesOf([first, second]);
    expect(fleet?.items.map((item) => item.item)).toEqual(items);
    for (const item of fleet?.items ?? []) {
      const owned = handles.get(item.item);
      expect(item.owner).toMatchObject({
        member: first.items().includes(item.item) ? 'a' : 'b',
        node: owned?.node,
        fencingToken: owned?.fencingToken,
        data: first.items().includes(item.item) ? 'a' : 'b',
      });
      expect(item.waiting).toEqual([]);
    }

    // Someone outside the fleet holds a new item's lock: the member it is for waits in line.
    const outside = await acquire(outsider, `${path}/items/shard-99`, { data: 'tool' });
    log.members.length = 0;
    first.stop();
    second.stop();
    const bigger = [...items, 'shard-99'];
    const only = startMember(fleetLog(), a, path, bigger, { id: 'a' });
    await vi.waitUntil(async () => {
      const found = await inspectFleet(outsider, path);
      return found?.items.find((item) => item.item === 'shard-99')?.waiting.length === 1;
    });
    const blocked = await inspectFleet(outsider, path);
    const item = blocked?.items.find((found) => found.item === 'shard-99');
    expect(item?.owner).toMatchObject({
      member: undefined,
      sessionId: outsider.sessionId,
      data: 'tool',
    });
    expect(item?.waiting).toMatchObject([{ member: 'a', sessionId: a.sessionId, data: 'a' }]);
    expect(blocked?.balanced).toBe(false);
    await outside.release();
    await vi.waitUntil(() => only.items().length === 5);
  });

  it('reads a plain membership group, and nothing where nothing is', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('fleet')}/workers`;
    const seen: unknown[] = [];
    const one = members(a, path, { id: 'one', data: 'x' }).subscribe((list) => seen.push(list));
    await vi.waitUntil(() => seen.length > 0);
    const fleet = await inspectFleet(b, path);
    expect(fleet).toMatchObject({
      kind: 'members',
      membersPath: path,
      members: [{ id: 'one', data: 'x', sessionId: a.sessionId, ownSession: false, items: [] }],
      items: [],
      balanced: undefined,
    });
    one.unsubscribe();
    expect(await inspectFleet(b, `${path}/nothing`)).toBeNull();
  });

  it('refuses bad input with a typed error', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    await expect(inspectFleet(a, 'fleet')).rejects.toMatchObject({ code: 'InvalidPath' });
    await expect(inspectFleet(a, '/')).rejects.toMatchObject({ code: 'InvalidPath' });
    await expect(inspectFleet(a, 3 as never)).rejects.toMatchObject({ code: 'InvalidPath' });
    await expect(inspectFleet({} as never, '/fleet')).rejects.toMatchObject({
      code: 'BadArguments',
    });
  });
});
