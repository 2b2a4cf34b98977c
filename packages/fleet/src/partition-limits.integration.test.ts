/**
 * `partition` past the limits (issue 32, item 3), against a real ZooKeeper: mass poison that
 * once took the fleet down one member at a time (an assignment over ZooKeeper's 1 MB), replies
 * over the client's `maxFrameBytes`, and names of 255 bytes: the fleet keeps working on what
 * fits and says what did not — never a crash loop.
 */
import { Permission, type ZkClient } from '@zkrx/core';
import { connectedClient, connectedClients } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { converged, fleetLog, startMember } from '../test/fleet';
import {
  inspectFleet,
  joinPartition,
  type PartitionFailure,
  type PartitionProblemError,
  partition,
} from './index';
import { encodePoisonReport } from './poison';

/** Anyone may read the node and set its ACL, nothing else (no child can be made). */
const readAndAdmin = [
  { permissions: Permission.Read | Permission.Admin, scheme: 'world', id: 'anyone' },
];

/** `count` names of `bytes` characters, distinct. */
function longNames(prefix: string, count: number, bytes: number): string[] {
  return Array.from({ length: count }, (_, at) =>
    `${prefix}-${String(at).padStart(5, '0')}-`.padEnd(bytes, 'x'),
  );
}

describe('partition past the limits', () => {
  it('mass poison (1,800 items of 200-byte names, no access): both members stay in, every item listed', async () => {
    const [a, b, observer] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
    const path = uniqueRoot('fleet');
    // No lock path can be made under <path>/items: every item is poison.
    await observer.promises.mkdirp(path, { mode: 'container' });
    await observer.promises.create(`${path}/items`, '', { acl: readAndAdmin });
    const items = longNames('tenant', 1_800, 200);
    const failures: PartitionFailure[] = [];
    const one = joinPartition(a, path, items, { id: 'one' });
    const two = joinPartition(b, path, items, { id: 'two' });
    for (const membership of [one, two]) {
      membership.errors$.subscribe((failure) => failures.push(failure));
    }
    await Promise.all([one.joined, two.joined]);
    // Each item found poison by one member, reported, and listed by inspectFleet.
    await vi.waitUntil(
      async () => (await inspectFleet(observer, path))?.poisoned.length === items.length,
      { timeout: 60_000 },
    );
    const found = new Set([
      ...(one.assignment?.poisoned.keys() ?? []),
      ...(two.assignment?.poisoned.keys() ?? []),
    ]);
    expect(found.size).toBe(items.length);
    // Never left: no failure, the same member nodes all along.
    expect(failures.filter((failure) => failure.retryInMs !== undefined)).toEqual([]);
    // What the coordinator writes stays small: a member's share and poison, as positions.
    for (const id of ['one', 'two']) {
      const node = await observer.promises.get(`${path}/assignments/${id}`);
      expect(node.data.length).toBeLessThan(1_000);
    }
    await Promise.all([one.leave(), two.leave()]);
    // Their reports went with them.
    await vi.waitUntil(
      async () => (await observer.promises.children(`${path}/poison`)).length === 0,
    );
    await observer.promises.delete(`${path}/items`);
  });

  it("past the client's maxFrameBytes the coordinator says what it could not list, and goes on", async () => {
    const path = uniqueRoot('fleet');
    const observer = await connectedClient();
    // 300 reports of long names (written by an outsider): a listing of about 60 KB.
    await observer.promises.mkdirp(`${path}/poison`, { mode: 'container' });
    const stale = longNames('old', 300, 200);
    for (const item of stale) {
      await observer.promises.create(
        `${path}/poison/${item}`,
        encodePoisonReport({ member: 'gone', code: 'NoAuth', message: 'no' }),
        { mode: 'ephemeral' },
      );
    }
    // The first member (the coordinator) takes replies of at most 16 KB.
    const small = await connectedClient({ maxFrameBytes: 16 * 1024 });
    const normal = await connectedClient();
    const told: PartitionProblemError[] = [];
    const items = ['a', 'b', 'c', 'd'];
    const log = fleetLog();
    const first = startMember(log, small, path, items, {
      id: 'first',
      onError: (error) => told.push(error),
    });
    await vi.waitUntil(() => first.items().length === 4);
    const second = startMember(log, normal, path, items, { id: 'second' });
    // It goes on: the items are spread, nobody left.
    await vi.waitUntil(() => converged([first, second], items));
    expect(told.some((error) => error.task === 'watch-poison')).toBe(true);
    expect(told.find((error) => error.task === 'watch-poison')?.cause).toMatchObject({
      code: 'ReplyTooLarge',
    });
    // It says so: on its node, and a small client's inspectFleet counts what it cannot list.
    const view = await inspectFleet(small, path);
    expect(view?.poisonedUnlisted).toBe(stale.length);
    expect(view?.members.find((member) => member.id === 'first')?.problems).toEqual([
      expect.objectContaining({ task: 'watch-poison', code: 'ReplyTooLarge' }),
    ]);
    expect((await inspectFleet(observer, path))?.poisoned).toHaveLength(stale.length);
    expect([first.state.error, second.state.error]).toEqual([undefined, undefined]);
    expect(log.violations).toEqual([]);
  });

  it('ids and item names of 255 bytes work: 20 members, 2,000 items', async () => {
    const clients = (await connectedClients(4)) as ZkClient[];
    const path = uniqueRoot('fleet');
    const items = longNames('item', 2_000, 255);
    const ids = longNames('member', 20, 255);
    const log = fleetLog();
    // Five members a client (each its own id): the fleet's cost is per member, not per session.
    const fleet = ids.map((id, at) =>
      startMember(log, clients[at % 4] as ZkClient, path, items, { id }),
    );
    await vi.waitUntil(() => converged(fleet, items), { timeout: 120_000 });
    for (const id of ids.slice(0, 3)) {
      const node = await (clients[0] as ZkClient).promises.get(`${path}/assignments/${id}`);
      // 100 of 2,000 as positions: well under a bitmap of n/8 bytes (and nowhere near 1 MB).
      expect(node.data.length).toBeLessThan(2_000 / 8 + 200);
    }
    for (const member of fleet) expect(member.state.error).toBeUndefined();
    expect(log.violations).toEqual([]);
  });

  it('refuses at once, naming the limit, what cannot fit: data over 64 KB, more than 100,000 items', async () => {
    const client = await connectedClient();
    const errors: unknown[] = [];
    partition(client, uniqueRoot('fleet'), ['x'], { id: 'w', data: 'x'.repeat(70_000) }).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    partition(
      client,
      uniqueRoot('fleet'),
      Array.from({ length: 100_001 }, (_, at) => `i${at}`),
      { id: 'w' },
    ).subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'BadArguments',
        message: expect.stringMatching(/at most 65536/),
      }),
      expect.objectContaining({
        code: 'BadArguments',
        message: expect.stringMatching(/at most 100000/),
      }),
    ]);
  });
});
