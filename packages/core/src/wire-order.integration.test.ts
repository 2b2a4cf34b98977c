/**
 * What the client delivers keeps the server's order: a reply read before a watch event reaches
 * its caller (the continuation of the call's promise) before the event reaches the watch
 * stream. The proxy holds a reply and an event and forwards them in one segment, so both are
 * read in one turn of the event loop.
 */
import { describe, expect, it } from 'vitest';
import { connectedClient, proxyTo, record, testRoot, waitFor } from '../test/support';

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

  it('so does childrenWithStat and children (no extra turn on the way)', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const writer = await connectedClient();
    const root = await testRoot();
    await writer.promises.create(`${root}/watched`, 'x');
    const order: string[] = [];
    const watched = record(client.watchExists(`${root}/watched`));
    await waitFor(() => watched.values.length === 1);
    watched.subscription.add(
      client.watchExists(`${root}/watched`).subscribe((stat) => {
        if (stat === null) order.push('event');
      }),
    );
    proxy.holdReplies(true);
    const names = client.promises.children(root).then(() => order.push('children'));
    await waitFor(() => proxy.heldReplyBytes > 0);
    const heldReply = proxy.heldReplyBytes;
    await writer.promises.delete(`${root}/watched`);
    await waitFor(() => proxy.heldReplyBytes > heldReply);
    proxy.holdReplies(false);
    await names;
    await waitFor(() => order.length === 2);
    expect(order).toEqual(['children', 'event']);
  });
});
