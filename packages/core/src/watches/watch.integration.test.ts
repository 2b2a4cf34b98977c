/**
 * Watch streams against a real ZooKeeper: ordering under rapid writes, one server watch per
 * path, changes missed while disconnected or across an expired session, and typed errors.
 */
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  connectedClient,
  createWithAcl,
  observableErrorOf,
  partition,
  proxyTo,
  record,
  sessionPrototype,
  sleep,
  statesOf,
  testRoot,
  transportName,
  waitFor,
  watchedPaths,
} from '../../test/support';
import type { NodeData, Stat } from '../index';

const textOf = (node: NodeData | null | undefined) => node?.data.toString() ?? null;

describe('watchData', () => {
  it('ends on the last of 1,000 rapid writes, with strictly increasing versions', async () => {
    const watcher = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/counter`;
    await writer.promises.create(path, 'v0');
    const stream = record(watcher.watchData(path));
    await waitFor(() => stream.values.length === 1);
    // Pipelined: every set is sent before the first answer comes back.
    const stats = await Promise.all(
      Array.from({ length: 1_000 }, (_, index) => writer.promises.set(path, `v${index + 1}`)),
    );
    expect(Math.max(...stats.map((stat) => stat.version))).toBe(1_000);
    await waitFor(() => stream.values.at(-1)?.stat.version === 1_000);
    const versions = stream.values.map((node) => node!.stat.version);
    for (let index = 1; index < versions.length; index++) {
      expect(versions[index]).toBeGreaterThan(versions[index - 1]!);
    }
    expect(textOf(stream.values.at(-1))).toBe('v1000');
    // Each emission's data is the data of its version.
    for (const node of stream.values) expect(textOf(node)).toBe(`v${node!.stat.version}`);
    expect(stream.error).toBeUndefined();
    await sleep(100);
    expect(stream.values.at(-1)?.stat.version).toBe(1_000);
  });

  it('emits null while the node is absent, its data once created, null once deleted', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/later`;
    const stream = record(client.watchData(path));
    await waitFor(() => stream.values.length === 1);
    expect(stream.values).toEqual([null]);
    await client.promises.create(path, 'born');
    await waitFor(() => stream.values.length === 2);
    expect(textOf(stream.values[1])).toBe('born');
    await client.promises.delete(path);
    await waitFor(() => stream.values.length === 3);
    expect(stream.values[2]).toBeNull();
    await client.promises.create(path, 'again');
    await waitFor(() => stream.values.length === 4);
    expect(textOf(stream.values[3])).toBe('again');
    expect(stream.values[3]!.stat.czxid).toBeGreaterThan(stream.values[1]!.stat.czxid);
  });

  it('shares one server watch between subscribers; the last unsubscribe stops re-arming it', async () => {
    const { connectString } = await testZooKeeper();
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/shared`;
    await writer.promises.create(path, 'a');
    const gets = vi.spyOn(sessionPrototype(), 'call');
    const watchedGets = () =>
      gets.mock.calls.filter(
        ([operation, request]) =>
          operation === 'get' &&
          (request as { path: string; watch: boolean }).path === path &&
          (request as { watch: boolean }).watch,
      ).length;
    try {
      const first = record(client.watchData(path));
      await waitFor(() => first.values.length === 1);
      const second = record(client.watchData(path));
      // The second subscriber gets the current value at once, without another read.
      expect(textOf(second.values[0])).toBe('a');
      expect(watchedGets()).toBe(1);
      expect(await watchedPaths(connectString, client.sessionId!)).toEqual([path]);

      await writer.promises.set(path, 'b');
      await waitFor(() => first.values.length === 2 && second.values.length === 2);
      expect(textOf(first.values[1])).toBe('b');
      expect(textOf(second.values[1])).toBe('b');
      // One event, one re-read for both.
      expect(watchedGets()).toBe(2);

      first.subscription.unsubscribe();
      await writer.promises.set(path, 'c');
      await waitFor(() => second.values.length === 3);
      expect(first.values).toHaveLength(2);
      expect(watchedGets()).toBe(3);
      expect(await watchedPaths(connectString, client.sessionId!)).toEqual([path]);

      // The last subscriber leaves: its watch is removed from the server, not left to fire (the
      // native transport lacks removeWatches: there it fires once more, to no one).
      second.subscription.unsubscribe();
      if (transportName !== 'native')
        await waitFor(
          async () => (await watchedPaths(connectString, client.sessionId!)).length === 0,
        );
      await writer.promises.set(path, 'd');
      await sleep(200);
      expect(watchedGets()).toBe(3);
      expect(second.values).toHaveLength(3);
      expect(await watchedPaths(connectString, client.sessionId!)).toEqual([]);
    } finally {
      gets.mockRestore();
    }
  });

  it('sees a change made while the connection was stalled, once it flows again', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await writer.promises.create(path, 'before');
    const stream = record(client.watchData(path));
    await waitFor(() => stream.values.length === 1);
    proxy.pause();
    await writer.promises.set(path, 'while paused');
    await sleep(200);
    expect(stream.values).toHaveLength(1);
    proxy.resume();
    await waitFor(() => stream.values.length === 2);
    expect(textOf(stream.values[1])).toBe('while paused');
  });

  it('sees a change made while disconnected, after reconnecting to the same session', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await writer.promises.create(path, 'before');
    const stream = record(client.watchData(path));
    const session = record(client.session$);
    await waitFor(() => stream.values.length === 1);
    await partition(proxy, client);
    await writer.promises.set(path, 'while away');
    await sleep(200);
    expect(stream.values).toHaveLength(1);
    proxy.refuse(false);
    await waitFor(() => stream.values.length === 2, 8_000);
    expect(textOf(stream.values[1])).toBe('while away');
    expect(statesOf(session)).toEqual(['connected', 'suspended', 'reconnected']);
    // Still watching on the same session.
    await writer.promises.set(path, 'after');
    await waitFor(() => stream.values.length === 3);
    expect(textOf(stream.values[2])).toBe('after');
  });

  it('re-reads on the new session after expiry, seeing a change its watch could not report', async () => {
    const { connectString } = await testZooKeeper();
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await writer.promises.create(path, 'before');
    const stream = record(client.watchData(path));
    const session = record(client.session$);
    await waitFor(() => stream.values.length === 1);
    const first = client.sessionId;
    // Stall the client, expire its session on the server (its watch goes with it), change the
    // node: no watch anywhere can report this change.
    proxy.pause();
    await expireSession({ connectString, ...client.sessionCredentials()! });
    await writer.promises.set(path, 'changed while expired');
    proxy.resume();
    await waitFor(() => stream.values.length === 2, 8_000);
    expect(textOf(stream.values[1])).toBe('changed while expired');
    expect(statesOf(session).slice(-3)).toEqual(['expired', 'connecting', 'connected']);
    expect(client.sessionId).not.toBe(first);
    // And it watches on the new session.
    await writer.promises.set(path, 'after');
    await waitFor(() => stream.values.length === 3);
    expect(textOf(stream.values[2])).toBe('after');
    expect(stream.error).toBeUndefined();
  });

  it('re-reads after expireSession(client) and emits the value changed meanwhile', async () => {
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await writer.promises.create(path, 'before');
    const stream = record(client.watchData(path));
    await waitFor(() => stream.values.length === 1);
    await expireSession(client);
    await writer.promises.set(path, 'after expiry');
    await waitFor(() => textOf(stream.values.at(-1)) === 'after expiry', 8_000);
    expect(stream.values.map(textOf)).toEqual(['before', 'after expiry']);
  });
});

describe('watchChildren', () => {
  it('emits [] for an absent parent, then sorted names as children come and go', async () => {
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const parent = `${root}/parent`;
    const stream = record(client.watchChildren(parent));
    await waitFor(() => stream.values.length === 1);
    expect(stream.values).toEqual([[]]);
    await writer.promises.create(parent);
    await writer.promises.create(`${parent}/b`);
    await writer.promises.create(`${parent}/a`);
    await writer.promises.create(`${parent}/c`);
    await waitFor(() => stream.values.at(-1)?.length === 3);
    expect(stream.values.at(-1)).toEqual(['a', 'b', 'c']);
    for (const names of stream.values) expect([...names]).toEqual([...names].sort());
    await writer.promises.delete(`${parent}/b`);
    await waitFor(() => stream.values.at(-1)?.length === 2);
    expect(stream.values.at(-1)).toEqual(['a', 'c']);
    // Data changes of the parent are not child changes.
    const count = stream.values.length;
    await writer.promises.set(parent, 'data');
    await sleep(150);
    expect(stream.values).toHaveLength(count);
    await writer.promises.delete(`${parent}/a`);
    await writer.promises.delete(`${parent}/c`);
    await writer.promises.delete(parent);
    await waitFor(() => stream.values.at(-1)?.length === 0);
    expect(stream.error).toBeUndefined();
  });

  it.skipIf(transportName === 'native')(
    "removes its child watch from the server once the last of a path's subscribers leaves",
    async () => {
      const { connectString } = await testZooKeeper();
      const client = await connectedClient();
      const root = await testRoot();
      const listed = `${root}/listed`;
      const absent = `${root}/absent`;
      await client.promises.create(listed);
      // How each removeWatches the client sends is answered (0: the server had that watch).
      const removals: Array<{ path: string; type: number; rc: number }> = [];
      const call = sessionPrototype().call;
      const calls = vi.spyOn(sessionPrototype(), 'call').mockImplementation(function (
        this: unknown,
        operation,
        request,
        reply,
      ) {
        const answer =
          operation === 'removeWatches'
            ? (rc: number, ...rest: unknown[]) => {
                removals.push({ ...(request as { path: string; type: number }), rc });
                (reply as (...args: unknown[]) => void)(rc, ...rest);
              }
            : reply;
        return (call as (...args: unknown[]) => void).call(this, operation, request, answer);
      } as typeof call);
      try {
        const first = record(client.watchChildren(listed));
        const second = record(client.watchChildren(listed));
        const missing = record(client.watchChildren(absent));
        await waitFor(() => first.values.length === 1 && missing.values.length === 1);
        first.subscription.unsubscribe();
        // Shared: the path's other subscriber keeps the watch, and is told of the change.
        await client.promises.create(`${listed}/a`);
        await waitFor(() => second.values.at(-1)?.length === 1);
        expect(removals).toEqual([]);
        second.subscription.unsubscribe();
        // A missing node's children wait on an existence watch (which wchc lists).
        expect(await watchedPaths(connectString, client.sessionId!)).toEqual([absent]);
        missing.subscription.unsubscribe();
        await waitFor(() => removals.length === 2);
        expect(removals).toEqual([
          { path: listed, type: 1, rc: 0 },
          { path: absent, type: 2, rc: 0 },
        ]);
        expect(await watchedPaths(connectString, client.sessionId!)).toEqual([]);
      } finally {
        calls.mockRestore();
      }
    },
  );
});

describe('watchExists', () => {
  it('emits null and Stat transitions: created, changed, deleted, created again', async () => {
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const path = `${root}/flag`;
    const stream = record(client.watchExists(path));
    await waitFor(() => stream.values.length === 1);
    expect(stream.values).toEqual([null]);
    const created = await writer.promises.create(path, 'x');
    await waitFor(() => stream.values.length === 2);
    expect(stream.values[1]).toEqual(created.stat);
    const changed = await writer.promises.set(path, 'y');
    await waitFor(() => stream.values.length === 3);
    expect(stream.values[2]).toEqual(changed);
    await writer.promises.delete(path);
    await waitFor(() => stream.values.length === 4);
    expect(stream.values[3]).toBeNull();
    const again = await writer.promises.create(path, 'z');
    await waitFor(() => stream.values.length === 5);
    expect((stream.values[4] as Stat).czxid).toBe(again.stat.czxid);
  });
});

describe('watch errors', () => {
  it('fails with a typed InvalidPath error for a bad path, through the observable', async () => {
    const client = await connectedClient();
    for (const [watch, path] of [
      [client.watchData.bind(client), 'relative'],
      [client.watchChildren.bind(client), '/trailing/'],
      [client.watchExists.bind(client), '/empty//segment'],
    ] as const) {
      const error = await observableErrorOf(watch(path));
      expect(error.code).toBe('InvalidPath');
      expect(error.path).toBe(path);
    }
  });

  it('fails with NoAuth through the observable when the node may not be read', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/secret`;
    await createWithAcl(client, path, 'x', [{ permissions: 2, scheme: 'world', id: 'anyone' }]); // write only
    const error = await observableErrorOf(client.watchData(path));
    expect(error).toMatchObject({ code: 'NoAuth', path });
    // Not every kind needs READ: exists does not.
    const exists = record(client.watchExists(path));
    await waitFor(() => exists.values.length === 1);
    expect(exists.values[0]).not.toBeNull();
    expect((await observableErrorOf(client.watchChildren(path))).code).toBe('NoAuth');
  });
});
