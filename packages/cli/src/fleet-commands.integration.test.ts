/**
 * `zkrx members` and `zkrx partitions` run in-process (`run`) against a real ZooKeeper, on fleets
 * of @zkrx/fleet members: what they print, their JSON, the live view's JSON lines, exit codes.
 */
import type { ZkClient } from '@zkrx/core';
import { type Assignment, members, partition } from '@zkrx/fleet';
import { connectedClients } from '@zkrx/test-support';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeIo } from '../test/fake-io';
import { run } from './index';

const running: Subscription[] = [];
afterEach(() => {
  for (const subscription of running.splice(0)) subscription.unsubscribe();
});

async function zkrx(argv: string[], io = fakeIo()) {
  const { connectString } = await testZooKeeper();
  const code = await run([...argv, '--connect', connectString], io);
  return { code, out: io.out(), err: io.err() };
}

/** A partition member; `latest()` is its last assignment. */
function member(client: ZkClient, path: string, items: string[], id: string, data?: string) {
  let latest: Assignment | undefined;
  const subscription = partition(client, path, items, { id, data }).subscribe({
    next: (assignment) => {
      latest = assignment;
    },
  });
  running.push(subscription);
  return { latest: () => latest, stop: () => subscription.unsubscribe() };
}

const shards = ['shard-0', 'shard-1', 'shard-2', 'shard-3'];

describe('zkrx members and zkrx partitions', () => {
  it('members: the members in join order, with data and owned counts; --json the same as data', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('cli');
    const first = member(a, path, shards, 'worker-1', '10.0.0.1:80');
    await vi.waitUntil(() => first.latest()?.items.length === 4);
    const second = member(b, path, shards, 'worker-2');
    await vi.waitUntil(
      () => first.latest()?.items.length === 2 && second.latest()?.items.length === 2,
    );

    const { code, out, err } = await zkrx(['members', path]);
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe(`${path}  partition · 2 members · 4 items (4 owned) · balanced`);
    expect(lines[1]).toMatch(/^ {2}# +MEMBER +SESSION +DATA +JOINED +ITEMS$/);
    expect(lines[2]).toMatch(
      new RegExp(`^  1 +worker-1 +0x${a.sessionId} +10\\.0\\.0\\.1:80 +\\S+ ago +2$`),
    );
    expect(lines[3]).toMatch(new RegExp(`^  2 +worker-2 +0x${b.sessionId} +- +\\S+ ago +2$`));

    const json = await zkrx(['members', path, '--json']);
    const parsed = JSON.parse(json.out);
    expect(parsed.fleet).toMatchObject({
      kind: 'partition',
      members: [
        { id: 'worker-1', data: '10.0.0.1:80', items: first.latest()?.items },
        { id: 'worker-2', data: '', items: second.latest()?.items },
      ],
    });
  });

  it('partitions: each item, its owner and token, who waits; a plain group and nothing are said', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('cli');
    const first = member(a, path, shards, 'worker-1');
    await vi.waitUntil(() => first.latest()?.items.length === 4);
    const second = member(b, path, shards, 'worker-2');
    await vi.waitUntil(() => second.latest()?.items.length === 2);
    await vi.waitUntil(() => first.latest()?.items.length === 2);

    const { code, out } = await zkrx(['partitions', path]);
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe(`${path}  partition · 2 members · 4 items (4 owned) · balanced`);
    expect(lines[1]).toMatch(/^ {2}ITEM +OWNER +TOKEN +SESSION +SINCE +WAITING$/);
    for (const [index, item] of shards.entries()) {
      const owner = first.latest()?.items.includes(item) ? first : second;
      const id = owner === first ? 'worker-1' : 'worker-2';
      const token = owner.latest()?.owned.get(item)?.fencingToken;
      const client = owner === first ? a : b;
      expect(lines[2 + index]).toMatch(
        new RegExp(`^  ${item} +${id} +${token} +0x${client.sessionId} +held ≤\\S+ +-$`),
      );
    }
    expect(lines.at(-2)).toBe('  owned: worker-1 2 · worker-2 2');
    expect(lines.at(-1)).toMatch(/^ {2}coordinator: worker-[12]$/);

    const json = JSON.parse((await zkrx(['partitions', path, '--json'])).out);
    expect(json.fleet.items).toHaveLength(4);
    expect(json.fleet.items[0]).toMatchObject({
      item: 'shard-0',
      owner: {
        member: 'worker-1',
        fencingToken: first.latest()?.owned.get('shard-0')?.fencingToken,
      },
      waiting: [],
    });

    // A plain membership group, and a path with nothing.
    const group = `${uniqueRoot('cli')}/workers`;
    const seen: unknown[] = [];
    running.push(members(a, group, { id: 'solo' }).subscribe((list) => seen.push(list)));
    await vi.waitUntil(() => seen.length > 0);
    expect((await zkrx(['partitions', group])).out).toBe(
      `No partition at ${group}: it is a membership group of 1 member (zkrx members ${group}).\n`,
    );
    expect((await zkrx(['members', group])).out).toMatch(
      new RegExp(
        `^${group}  membership · 1 member\n +# +MEMBER +SESSION +DATA +JOINED\n +1 +solo `,
      ),
    );
    expect(await zkrx(['members', `${group}/none`])).toEqual({
      code: 0,
      out: `No members at ${group}/none (${group}/none does not exist).\n`,
      err: '',
    });
  });

  it('--watch --json: one JSON line a change, with joins and moves; stops on Ctrl-C', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = uniqueRoot('cli');
    const io = fakeIo();
    const lines = io.jsonLines;
    const events = () => lines().flatMap((line) => line.events);
    const first = member(a, path, shards, 'worker-1');
    await vi.waitUntil(() => first.latest()?.items.length === 4);
    const watching = zkrx(['partitions', path, '--watch', '--json'], io);
    await vi.waitUntil(() => lines().length >= 1, { timeout: 20_000 });
    expect(lines()[0]).toMatchObject({ path, fleet: { kind: 'partition' }, events: [] });
    member(b, path, shards, 'worker-2');
    await vi.waitUntil(
      () =>
        events().some((event) => event.kind === 'joined' && event.member === 'worker-2') &&
        events().filter((event) => event.to === 'worker-2').length === 2,
      { timeout: 20_000 },
    );
    for (const event of events().filter((found) => found.to === 'worker-2')) {
      expect(['moved', 'taken']).toContain(event.kind);
      expect(event.token).toBeGreaterThan(0);
    }
    io.interrupt();
    expect((await watching).code).toBe(0);
    first.stop();
  });

  it('help for both commands; --watch without a terminal needs --json', async () => {
    for (const command of ['members', 'partitions']) {
      const page = fakeIo();
      expect(await run([command, '--help'], page)).toBe(0);
      expect(page.out()).toMatch(new RegExp(`^Usage: zkrx ${command} <path>`));
      const viaHelp = fakeIo();
      expect(await run(['help', command], viaHelp)).toBe(0);
      expect(viaHelp.out()).toBe(page.out());
      const notTerminal = fakeIo();
      expect(await run([command, '/fleet', '--watch'], notTerminal)).toBe(2);
      expect(notTerminal.err()).toMatch(/--watch draws on a terminal/);
      const noPath = fakeIo();
      expect(await run([command], noPath)).toBe(2);
      expect(noPath.err()).toMatch(new RegExp(`zkrx ${command} needs a path`));
    }
    const root = fakeIo();
    await run(['--help'], root);
    expect(root.out()).toContain('zkrx members <path>');
    expect(root.out()).toContain('zkrx partitions <path>');
  });
});
