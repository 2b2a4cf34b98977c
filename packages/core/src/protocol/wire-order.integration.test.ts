/**
 * What the client delivers keeps the server's order: a reply read before a watch event reaches
 * its caller (the continuation of the call's promise) before the event reaches the watch
 * stream. The proxy holds a reply and an event and forwards them in one segment, so both are
 * read in one turn of the event loop.
 */
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  proxyTo,
  record,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { OPEN_ACL_UNSAFE, op, type ZkClient } from '../index';

describe('wire order', () => {
  it('a reply read before a watch event is delivered before it', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    await writer.promises.create(`${root}/watched`, 'x');
    await writer.promises.create(`${root}/read`, 'snapshot');
    const order: string[] = [];
    const watched = record(client.watchData(`${root}/watched`));
    await waitFor(() => watched.values.length === 1);
    watched.subscription.add(
      client.watchData(`${root}/watched`).subscribe((node) => {
        if (node === null) order.push('event: deleted');
      }),
    );

    proxy.holdReplies(true);
    const read = client.promises.get(`${root}/read`).then((node) => {
      order.push(`reply: ${node.data.toString()}`);
    });
    await waitFor(() => proxy.heldReplyBytes > 0);
    const heldReply = proxy.heldReplyBytes;
    // The deletion happens after the read on the server: its event follows the reply.
    await writer.promises.delete(`${root}/watched`);
    await waitFor(() => proxy.heldReplyBytes > heldReply);
    proxy.holdReplies(false);
    await read;
    await waitFor(() => order.length === 2);
    expect(order).toEqual(['reply: snapshot', 'event: deleted']);
  });

  // Every call of `client.promises`, the recipes' one-request case included (create with
  // parents that exist, mkdirp of a path that exists): its reply is held by the proxy, a watched
  // node is then deleted, and both are forwarded in one segment. The call's continuation must
  // come first. (A recipe of several requests settles from its last reply the same way.)
  // On the native transport the stock binding reads a created node's Stat, and a node before
  // its ACL, with a second request (the event comes before that one's reply), and has no
  // multi, getAllChildrenNumber or getEphemerals: those run on the default transport only.
  const nativeLacks = new Set([
    'create',
    'create with parents',
    'getAcl',
    'multi',
    'getAllChildrenNumber',
    'getEphemerals',
  ]);
  const calls: Array<[string, (client: ZkClient, root: string) => Promise<unknown>]> = [
    ['create', (c, root) => c.promises.create(`${root}/made`, 'x')],
    [
      'create with parents',
      (c, root) => c.promises.create(`${root}/read/made`, 'x', { parents: 'persistent' }),
    ],
    ['mkdirp', (c, root) => c.promises.mkdirp(`${root}/read`)],
    ['get', (c, root) => c.promises.get(`${root}/read`)],
    // Names only, or with the Stat: no extra turn on the way either.
    ['children', (c, root) => c.promises.children(root)],
    ['childrenWithStat', (c, root) => c.promises.childrenWithStat(root)],
    ['set', (c, root) => c.promises.set(`${root}/read`, 'y')],
    ['delete', (c, root) => c.promises.delete(`${root}/gone`)],
    ['exists', (c, root) => c.promises.exists(`${root}/read`)],
    ['sync', (c, root) => c.promises.sync(root)],
    ['getAcl', (c, root) => c.promises.getAcl(`${root}/read`)],
    ['setAcl', (c, root) => c.promises.setAcl(`${root}/read`, OPEN_ACL_UNSAFE)],
    ['multi', (c, root) => c.promises.multi([op.check(`${root}/read`)])],
    ['getAllChildrenNumber', (c, root) => c.promises.getAllChildrenNumber(root)],
    ['getEphemerals', (c, root) => c.promises.getEphemerals(root)],
  ];

  it.each(calls.filter(([name]) => transportName === 'typescript' || !nativeLacks.has(name)))(
    'so does %s',
    async (_, call) => {
      const proxy = await proxyTo();
      const client = await connectedClient({ connect: proxy.connectString });
      const writer = await connectedClient();
      const root = await testRoot();
      for (const name of ['watched', 'read', 'gone']) {
        await writer.promises.create(`${root}/${name}`, 'x');
      }
      const order: string[] = [];
      const watched = record(client.watchExists(`${root}/watched`));
      await waitFor(() => watched.values.length === 1);
      watched.subscription.add(
        client.watchExists(`${root}/watched`).subscribe((stat) => {
          if (stat === null) order.push('event');
        }),
      );
      proxy.holdReplies(true);
      const done = call(client, root).then(() => order.push('reply'));
      await waitFor(() => proxy.heldReplyBytes > 0);
      const heldReply = proxy.heldReplyBytes;
      await writer.promises.delete(`${root}/watched`);
      await waitFor(() => proxy.heldReplyBytes > heldReply);
      proxy.holdReplies(false);
      await done;
      await waitFor(() => order.length === 2);
      expect(order).toEqual(['reply', 'event']);
    },
  );
});
