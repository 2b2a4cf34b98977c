/**
 * watchTree against a real ZooKeeper: one persistent recursive watch reports every create,
 * delete and data change under a path, is shared by its subscribers, comes back after a
 * reconnection and on a new session — reporting what changed meanwhile — and is removed on the
 * server when the last one leaves.
 */
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  connectedClient,
  observableErrorOf,
  partition,
  proxyTo,
  record,
  sessionPrototype,
  sleep,
  testRoot,
  transportName,
  waitFor,
  watchedPaths,
} from '../../test/support';
import type { TreeEvent, ZkClient } from '../index';
import { TreeWatches } from './watch-tree';

const changes = (events: readonly TreeEvent[]) => events.filter((event) => event.type !== 'resync');

const created = (path: string): TreeEvent => ({ type: 'created', path });
const deleted = (path: string): TreeEvent => ({ type: 'deleted', path });
const changed = (path: string): TreeEvent => ({ type: 'changed', path });

/** The tree the gap tests start from (relative paths, parents first). */
const GAP_TREE = [
  'keep',
  'gone',
  'again',
  'sub',
  'sub/a',
  'sub/a/b',
  'sub/c',
  'still',
  'touched',
  'touched-again',
];

/**
 * Live changes once the watch is in place, then a read by the watching client: its reply
 * carries a zxid past them. The gap below deletes and creates names again under the same
 * parent, so whether `born-live` is still the node created live is judged by its czxid against
 * the session's last zxid: without that read it would be reported again (the documented
 * at-least-once window; the next test has no such read and no such gap).
 */
async function liveChanges(
  client: ZkClient,
  writer: ZkClient,
  root: string,
  events: readonly TreeEvent[],
) {
  await writer.promises.set(`${root}/touched`, 'live');
  await writer.promises.set(`${root}/touched-again`, 'live');
  await writer.promises.create(`${root}/born-live`);
  await writer.promises.create(`${root}/born-live-again`);
  await waitFor(() => events.at(-1)?.path === `${root}/born-live-again`);
  await client.promises.exists(root);
}

/** Everything that can happen to a node while the watching client is away. */
async function gapChanges(writer: ZkClient, root: string) {
  await writer.promises.set(`${root}/keep`, 'changed while away');
  await writer.promises.delete(`${root}/gone`);
  await writer.promises.delete(`${root}/again`);
  await writer.promises.create(`${root}/again`, 'a new node at the same path');
  for (const path of ['sub/a/b', 'sub/a', 'sub/c', 'sub']) {
    await writer.promises.delete(`${root}/${path}`);
  }
  await writer.promises.create(`${root}/new`);
  await writer.promises.create(`${root}/new/child`);
  await writer.promises.create(`${root}/flash`); // created and deleted: nothing to report
  await writer.promises.delete(`${root}/flash`);
  await writer.promises.set(`${root}/touched-again`, 'changed while away too');
  await writer.promises.delete(`${root}/born-live-again`);
  await writer.promises.create(`${root}/born-live-again`);
}

/** What the gap must be reported as: deletions deepest first, creations, data changes. */
function gapEvents(root: string): TreeEvent[] {
  return [
    deleted(`${root}/sub/a/b`),
    deleted(`${root}/sub/a`),
    deleted(`${root}/sub/c`),
    deleted(`${root}/again`),
    deleted(`${root}/born-live-again`),
    deleted(`${root}/gone`),
    deleted(`${root}/sub`),
    created(`${root}/again`),
    created(`${root}/born-live-again`),
    created(`${root}/new`),
    created(`${root}/new/child`),
    changed(`${root}/keep`),
    changed(`${root}/touched-again`),
  ];
}

/**
 * The session timeout of a client cut off by {@link partition}: the longest the test server
 * grants, so a gap made slow by a busy machine stays a reconnection, not an expiry.
 */
const GAP_SESSION_MS = 10_000;

/**
 * Resolves once the server has `client`'s watches back after a reconnection. The `reconnected`
 * resync comes as soon as the connection is up, before the server has processed the setWatches
 * that puts the watch back: a change made in between is one of the gap's (the walk finds it and
 * reports it with them: the test of that window pins it). A reply proves the server has them: the
 * transport writes setWatches first on every new connection, and ZooKeeper processes a session's
 * requests in order (the setWatches reply carries the zxid the server had then).
 */
async function watchBack(client: ZkClient) {
  await client.promises.exists('/');
}

/**
 * A client behind a proxy (to cut or partition it) watching the tree at `root` (or at
 * `root/<under>`) once `nodes` exist under it, started (its first read done); and a writer.
 */
async function watchBehindProxy(nodes: readonly string[] = [], under?: string) {
  const proxy = await proxyTo();
  const client = await connectedClient({
    connect: proxy.connectString,
    sessionTimeoutMs: GAP_SESSION_MS,
  });
  const writer = await connectedClient();
  const root = await testRoot();
  for (const path of nodes) await writer.promises.create(`${root}/${path}`);
  const tree = record(client.watchTree(under === undefined ? root : `${root}/${under}`));
  await waitFor(() => tree.values.length === 1); // started: the tree has been read
  return { proxy, client, writer, root, tree };
}

const isResync = (reason: string) => (event: TreeEvent) =>
  event.type === 'resync' && event.reason === reason;

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
    const calls = vi.spyOn(sessionPrototype(), 'call');
    const adds = () => calls.mock.calls.filter(([operation]) => operation === 'addWatch');
    try {
      const first = record(client.watchTree(root));
      await waitFor(() => first.values.length === 1);
      const second = record(client.watchTree(root));
      expect(second.values).toEqual([{ type: 'resync', path: root, reason: 'started' }]);
      expect(adds()).toHaveLength(1);
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
      calls.mockRestore();
    }
  });

  it('keeps watching across a reconnection (a resync marks the gap) and on a new session after expiry', async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy();
    await partition(proxy, client);
    await writer.promises.create(`${root}/while-away`);
    proxy.refuse(false);
    await waitFor(() =>
      tree.values.some((event) => event.type === 'resync' && event.reason === 'reconnected'),
    );
    await watchBack(client);
    await writer.promises.create(`${root}/after-reconnect`);
    await waitFor(() => tree.values.at(-1)?.path === `${root}/after-reconnect`);

    await expireSession(client);
    // `expired` comes with the reply to the watch added again: no barrier needed.
    await waitFor(() =>
      tree.values.some((event) => event.type === 'resync' && event.reason === 'expired'),
    );
    await writer.promises.set(`${root}/after-reconnect`, 'new session');
    await waitFor(() => tree.values.at(-1)?.type === 'changed');
    expect(tree.values.at(-1)).toEqual({ type: 'changed', path: `${root}/after-reconnect` });
    expect(tree.values).toEqual([
      { type: 'resync', path: root, reason: 'started' },
      { type: 'resync', path: root, reason: 'reconnected' },
      created(`${root}/while-away`), // made while disconnected: found by reading the tree again
      created(`${root}/after-reconnect`),
      { type: 'resync', path: root, reason: 'expired' },
      changed(`${root}/after-reconnect`),
    ]);
    expect(tree.error).toBeUndefined();
  });

  it("reports a change made after the `reconnected` resync, before the server has the watch back, once with the gap's", async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy([
      'changed-then',
      'deleted-then',
    ]);
    await partition(proxy, client);
    await writer.promises.create(`${root}/while-away`);
    // The moment the session is back (its ConnectResponse read), stall the new connection:
    // nothing after the handshake has been written yet (frames go out on the next turn), so
    // the setWatches that puts the watch back and the walk's reads wait in the proxy.
    const stall = client.session$.subscribe(({ state }) => {
      if (state === 'reconnected') proxy.pause();
    });
    const seen = tree.values.length;
    try {
      proxy.refuse(false);
      await waitFor(() => tree.values.some(isResync('reconnected')));
    } finally {
      stall.unsubscribe();
    }
    expect(proxy.paused).toBe(true);
    // After the resync, before the server has the watch back: no live event can come for it.
    await writer.promises.create(`${root}/in-the-window`);
    await writer.promises.set(`${root}/changed-then`, 'in the window');
    await writer.promises.delete(`${root}/deleted-then`);
    proxy.resume();
    await watchBack(client);
    await writer.promises.create(`${root}/marker`); // the watch is back: reported live
    await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
    expect(tree.values.slice(seen)).toEqual([
      { type: 'resync', path: root, reason: 'reconnected' },
      // Found by the walk: the gap's changes, those of the window among them.
      deleted(`${root}/deleted-then`),
      created(`${root}/in-the-window`),
      created(`${root}/while-away`),
      changed(`${root}/changed-then`),
      created(`${root}/marker`),
    ]);
    expect(tree.error).toBeUndefined();
  });

  it('reports every change made during a cut after the resync, each once', async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy(GAP_TREE);
    await liveChanges(client, writer, root, tree.values);
    await partition(proxy, client);
    await gapChanges(writer, root);
    const seen = tree.values.length;
    proxy.refuse(false);
    await waitFor(() => tree.values.some(isResync('reconnected')));
    await watchBack(client);
    // Reported after the gap's changes, whether it lands during the walk or after it.
    await writer.promises.create(`${root}/marker`);
    await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
    expect(tree.values.slice(seen)).toEqual([
      { type: 'resync', path: root, reason: 'reconnected' },
      ...gapEvents(root),
      created(`${root}/marker`),
    ]);
    expect(tree.error).toBeUndefined();
  });

  it('reports every change made while its session expired after the resync, each once', async () => {
    const { connectString } = await testZooKeeper();
    const { proxy, client, writer, root, tree } = await watchBehindProxy(GAP_TREE);
    await liveChanges(client, writer, root, tree.values);
    const credentials = client.sessionCredentials()!;
    await partition(proxy, client);
    await gapChanges(writer, root);
    await expireSession({ connectString, ...credentials });
    const seen = tree.values.length;
    proxy.refuse(false);
    await waitFor(() => tree.values.some(isResync('expired')));
    await writer.promises.create(`${root}/marker`);
    await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
    expect(tree.values.slice(seen)).toEqual([
      { type: 'resync', path: root, reason: 'expired' },
      ...gapEvents(root),
      created(`${root}/marker`),
    ]);
    expect(tree.error).toBeUndefined();
  });

  it('reports nothing twice to a watcher that sends no request of its own (live events counted)', async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy([
      'keep',
      'gone',
      'touched',
      'p',
    ]);
    // After the walk's last reply: the session's last zxid is below all of these.
    await writer.promises.set(`${root}/touched`, 'live');
    await writer.promises.set(`${root}/touched`, 'live again');
    await writer.promises.create(`${root}/p/born`);
    await writer.promises.set(`${root}/p/born`, 'live');
    await waitFor(() => tree.values.length === 5);
    await partition(proxy, client);
    await writer.promises.set(`${root}/keep`, 'changed while away');
    await writer.promises.delete(`${root}/gone`);
    await writer.promises.create(`${root}/new`);
    const seen = tree.values.length;
    proxy.refuse(false);
    await waitFor(() => tree.values.some(isResync('reconnected')));
    // A request after the gap's start: the bound was taken when the connection came back.
    await watchBack(client);
    await writer.promises.create(`${root}/marker`);
    await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
    expect(tree.values.slice(seen)).toEqual([
      { type: 'resync', path: root, reason: 'reconnected' },
      deleted(`${root}/gone`),
      created(`${root}/new`),
      changed(`${root}/keep`),
      created(`${root}/marker`),
    ]);
  });

  it('reads again a node whose read raced a live change, so the next gap does not report it again', async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy(['x']);
    const x = `${root}/x`;
    // After the gap, x's read (the walk's last) is answered, then held while x changes: the
    // walk cannot tell whether its version is before or after the change.
    let parked = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const read = client.promises.childrenWithStat;
    const reads = vi.spyOn(client.promises, 'childrenWithStat').mockImplementation(async (path) => {
      const listing = await read(path);
      if (path === x && !parked) {
        parked = true;
        await gate;
      }
      return listing;
    });
    const delivered = vi.spyOn(TreeWatches.prototype, 'onEvent');
    try {
      await partition(proxy, client);
      const seen = tree.values.length;
      proxy.refuse(false);
      await waitFor(() => parked);
      await writer.promises.set(x, 'while its read is held');
      await waitFor(() =>
        delivered.mock.calls.some(([type, path]) => type === 'changed' && path === x),
      );
      release();
      await waitFor(() => tree.values.at(-1)?.type === 'changed');
      await partition(proxy, client); // nothing changes during this one
      proxy.refuse(false);
      await waitFor(() => tree.values.filter(isResync('reconnected')).length === 2);
      await watchBack(client);
      await writer.promises.create(`${root}/marker`);
      await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
      expect(tree.values.slice(seen)).toEqual([
        { type: 'resync', path: root, reason: 'reconnected' },
        changed(x),
        { type: 'resync', path: root, reason: 'reconnected' },
        created(`${root}/marker`),
      ]);
    } finally {
      reads.mockRestore();
      delivered.mockRestore();
    }
  });

  it('reports a root deleted during a cut as every node under it deleted, bottom-up', async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy(
      ['tree', 'tree/a', 'tree/a/b', 'tree/c'],
      'tree',
    );
    const top = `${root}/tree`;
    await partition(proxy, client);
    for (const path of ['/a/b', '/a', '/c', '']) await writer.promises.delete(`${top}${path}`);
    proxy.refuse(false);
    await waitFor(() => tree.values.some(isResync('reconnected')));
    await watchBack(client);
    await writer.promises.create(top); // a new root: reported live
    await waitFor(() => tree.values.at(-1)?.type === 'created');
    expect(tree.values).toEqual([
      { type: 'resync', path: top, reason: 'started' },
      { type: 'resync', path: top, reason: 'reconnected' },
      deleted(`${top}/a/b`),
      deleted(`${top}/a`),
      deleted(`${top}/c`),
      deleted(top),
      created(top),
    ]);
  });

  it("reports the live events that arrive during the walk after a gap once, after the gap's", async () => {
    const { proxy, client, writer, root, tree } = await watchBehindProxy(['p', 'p/x', 'p/y', 'q']);
    await partition(proxy, client);
    await writer.promises.set(`${root}/p/x`, 'changed while away');
    await writer.promises.create(`${root}/c`);
    await writer.promises.delete(`${root}/q`);
    // Hold the walk's read of the root (its first) until the live changes below have reached
    // the client: they happen after the watch is back, before the walk reads their nodes.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const read = client.promises.childrenWithStat;
    const held: string[] = [];
    const reads = vi.spyOn(client.promises, 'childrenWithStat').mockImplementation(async (path) => {
      if (path === root) {
        held.push(path);
        await gate;
      }
      return read(path);
    });
    try {
      const seen = tree.values.length;
      proxy.refuse(false);
      await waitFor(() => held.length === 1);
      await watchBack(client); // the root's read is held before it is sent: this one is not
      // A subscriber joining during the walk: its `started` comes after the walk.
      const late = record(client.watchTree(root));
      await writer.promises.set(`${root}/p/x`, 'live'); // changed in the gap and live
      await writer.promises.set(`${root}/c`, 'live'); // created in the gap, changed live
      await writer.promises.create(`${root}/q`); // deleted in the gap, created live
      await writer.promises.delete(`${root}/p/y`); // listed by p's read? no: deleted before it
      await writer.promises.create(`${root}/p/z`); // created live, seen by the walk too
      await client.promises.exists(root); // its reply comes after those events
      expect(tree.values.slice(seen)).toEqual([
        { type: 'resync', path: root, reason: 'reconnected' },
      ]);
      open();
      await writer.promises.create(`${root}/marker`);
      await waitFor(() => tree.values.at(-1)?.path === `${root}/marker`);
      expect(tree.values.slice(seen)).toEqual([
        { type: 'resync', path: root, reason: 'reconnected' },
        deleted(`${root}/q`),
        created(`${root}/c`),
        changed(`${root}/p/x`),
        changed(`${root}/c`),
        created(`${root}/q`),
        deleted(`${root}/p/y`),
        created(`${root}/p/z`),
        created(`${root}/marker`),
      ]);
      await waitFor(() => late.values.length > 0);
      expect(late.values[0]).toEqual({ type: 'resync', path: root, reason: 'started' });
      expect(changes(late.values).filter((event) => event.path !== `${root}/marker`)).toEqual([]);
      expect(tree.error).toBeUndefined();
    } finally {
      reads.mockRestore();
    }
  });

  it('without a snapshot: reads nothing, reports each change as it comes, shares the watch with a snapshot', async () => {
    const { connectString } = await testZooKeeper();
    const client = await connectedClient();
    const writer = await connectedClient();
    const root = await testRoot();
    await Promise.all(
      Array.from({ length: 100 }, (_, index) => writer.promises.create(`${root}/n-${index}`)),
    );
    const calls = vi.spyOn(sessionPrototype(), 'call');
    const ops = (name: string) => calls.mock.calls.filter(([operation]) => operation === name);
    try {
      const bare = record(client.watchTree(root, { snapshot: false }));
      await waitFor(() => bare.values.length === 1);
      expect(bare.values[0]).toEqual({ type: 'resync', path: root, reason: 'started' });
      expect(ops('children')).toHaveLength(0); // no walk of the 101 nodes
      await writer.promises.set(`${root}/n-1`, 'x');
      await waitFor(() => bare.values.length === 2);
      expect(bare.values[1]).toEqual(changed(`${root}/n-1`));
      // A subscriber that wants the snapshot: the tree is read for it, on the same watch.
      const full = record(client.watchTree(root));
      await waitFor(() => full.values.length === 1);
      expect(ops('children').length).toBeGreaterThanOrEqual(101);
      expect(ops('addWatch')).toHaveLength(1);
      expect(await watchedPaths(connectString, client.sessionId!)).toEqual([root]);
      await writer.promises.delete(`${root}/n-2`);
      await waitFor(() => bare.values.length === 3 && full.values.length === 2);
      expect(bare.values[2]).toEqual(deleted(`${root}/n-2`));
      expect(full.values[1]).toEqual(deleted(`${root}/n-2`));
      // The snapshot's subscriber leaves: the bare one goes on, its snapshot dropped.
      full.subscription.unsubscribe();
      await writer.promises.create(`${root}/n-new`);
      await waitFor(() => bare.values.length === 4);
      expect(bare.values[3]).toEqual(created(`${root}/n-new`));
      expect(bare.error).toBeUndefined();
    } finally {
      calls.mockRestore();
    }
  });

  it("without a snapshot: after a gap only the resync, the tree not read again and the gap's changes not reported", async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({
      connect: proxy.connectString,
      sessionTimeoutMs: GAP_SESSION_MS,
    });
    const writer = await connectedClient();
    const root = await testRoot();
    const tree = record(client.watchTree(root, { snapshot: false }));
    await waitFor(() => tree.values.length === 1);
    const calls = vi.spyOn(sessionPrototype(), 'call');
    try {
      await partition(proxy, client);
      await writer.promises.create(`${root}/while-away`);
      proxy.refuse(false);
      await waitFor(() => tree.values.some(isResync('reconnected')));
      await watchBack(client);
      await writer.promises.create(`${root}/after-reconnect`);
      await waitFor(() => tree.values.at(-1)?.path === `${root}/after-reconnect`);
      await expireSession(client);
      await waitFor(() => tree.values.some(isResync('expired')));
      await writer.promises.set(`${root}/after-reconnect`, 'new session');
      await waitFor(() => tree.values.at(-1)?.type === 'changed');
      expect(tree.values).toEqual([
        { type: 'resync', path: root, reason: 'started' },
        { type: 'resync', path: root, reason: 'reconnected' },
        created(`${root}/after-reconnect`), // `while-away`: the subscriber reads it itself
        { type: 'resync', path: root, reason: 'expired' },
        changed(`${root}/after-reconnect`),
      ]);
      expect(calls.mock.calls.filter(([operation]) => operation === 'children')).toHaveLength(0);
      expect(tree.error).toBeUndefined();
    } finally {
      calls.mockRestore();
    }
  });

  it('fails with BadArguments for a snapshot option that is not a boolean', async () => {
    const client = await connectedClient();
    const error = await observableErrorOf(
      client.watchTree('/', { snapshot: 'no' as unknown as boolean }),
    );
    expect(error.code).toBe('BadArguments');
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
