/**
 * watchTree against a real ZooKeeper: one persistent recursive watch reports every create,
 * delete and data change under a path, is shared by its subscribers, comes back after a
 * reconnection and on a new session, and is removed on the server when the last one leaves.
 */
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  connectedClient,
  observableErrorOf,
  proxyTo,
  record,
  sessionPrototype,
  sleep,
  testRoot,
  transportName,
  waitFor,
  watchedPaths,
} from '../test/support';
import type { TreeEvent } from './index';

const changes = (events: readonly TreeEvent[]) => events.filter((event) => event.type !== 'resync');

describe.runIf(transportName === 'typescript')('watchTree', () => {
  it('reports every create, data change and delete at any depth under the root, and nothing else', async () => {
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    await writer.promises.create(`${root}/tree`);
    await writer.promises.create(`${root}/tree-sibling`);
    const tree = record(client.watchTree(`${root}/tree`));
    await waitFor(() => tree.values.length === 1);
    expect(tree.values[0]).toEqual({ type: 'resync', path: `${root}/tree`, reason: 'started' });
    await writer.promises.create(`${root}/tree/a`, '1');
    await writer.promises.create(`${root}/tree/a/b`, '2');
    await writer.promises.set(`${root}/tree/a/b`, '3');
    await writer.promises.set(`${root}/tree`, 'root data');
    await writer.promises.create(`${root}/tree-sibling/x`); // outside: a name prefix only
    await writer.promises.delete(`${root}/tree/a/b`);
    await writer.promises.delete(`${root}/tree/a`);
    await waitFor(() => tree.values.length === 7);
    expect(changes(tree.values)).toEqual([
      { type: 'created', path: `${root}/tree/a` },
      { type: 'created', path: `${root}/tree/a/b` },
      { type: 'changed', path: `${root}/tree/a/b` },
      { type: 'changed', path: `${root}/tree` },
      { type: 'deleted', path: `${root}/tree/a/b` },
      { type: 'deleted', path: `${root}/tree/a` },
    ]);
    await sleep(100);
    expect(tree.values).toHaveLength(7);
    expect(tree.error).toBeUndefined();
  });

  it('shares one server watch between subscribers and removes it when the last one leaves', async () => {
    const { connectString } = await testZooKeeper();
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    const adds = vi.spyOn(sessionPrototype(), 'addWatch');
    try {
      const first = record(client.watchTree(root));
      await waitFor(() => first.values.length === 1);
      const second = record(client.watchTree(root));
      expect(second.values).toEqual([{ type: 'resync', path: root, reason: 'started' }]);
      expect(adds).toHaveBeenCalledTimes(1);
      expect(await watchedPaths(connectString, client.sessionId!)).toEqual([root]);
      await writer.promises.create(`${root}/n`);
      await waitFor(() => first.values.length === 2 && second.values.length === 2);
      first.subscription.unsubscribe();
      second.subscription.unsubscribe();
      await waitFor(
        async () => (await watchedPaths(connectString, client.sessionId!)).length === 0,
      );
      await writer.promises.create(`${root}/m`);
      await sleep(100);
      expect(second.values).toHaveLength(2);
    } finally {
      adds.mockRestore();
    }
  });

  it('keeps watching across a reconnection (a resync marks the gap) and on a new session after expiry', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    const tree = record(client.watchTree(root));
    await waitFor(() => tree.values.length === 1);
    proxy.refuse(true);
    proxy.cut();
    await waitFor(() => client.state === 'suspended');
    await writer.promises.create(`${root}/while-away`);
    proxy.refuse(false);
    await waitFor(() =>
      tree.values.some((event) => event.type === 'resync' && event.reason === 'reconnected'),
    );
    await writer.promises.create(`${root}/after-reconnect`);
    await waitFor(() => tree.values.at(-1)?.path === `${root}/after-reconnect`);

    await expireSession(client);
    await waitFor(() =>
      tree.values.some((event) => event.type === 'resync' && event.reason === 'expired'),
    );
    await writer.promises.set(`${root}/after-reconnect`, 'new session');
    await waitFor(() => tree.values.at(-1)?.type === 'changed');
    expect(tree.values.at(-1)).toEqual({ type: 'changed', path: `${root}/after-reconnect` });
    // A change made while disconnected is not reported (the resync says to read again).
    expect(changes(tree.values).some((event) => event.path === `${root}/while-away`)).toBe(false);
    expect(tree.error).toBeUndefined();
  });

  it('fails with InvalidPath for a bad path, and completes when the client closes', async () => {
    const client = await connectedClient();
    expect((await observableErrorOf(client.watchTree('no-slash'))).code).toBe('InvalidPath');
    const root = await testRoot();
    const tree = record(client.watchTree(root));
    await waitFor(() => tree.values.length === 1);
    await client.close();
    expect(tree.completed).toBe(true);
  });
});

describe.runIf(transportName === 'native')('watchTree on the native transport', () => {
  it('fails with Unimplemented naming the default transport', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const error = await observableErrorOf(client.watchTree(root));
    expect(error.code).toBe('Unimplemented');
    expect(error.message).toContain('default (TypeScript) transport');
  });
});
