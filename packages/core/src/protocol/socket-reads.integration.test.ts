/**
 * The frame decoder as the socket feeds it, on every Node line (`test:lines`): whatever size the
 * reads come in — Node hands the connection one buffer per read (the process's shared buffer of
 * `onread` on plain TCP, a `data` chunk otherwise), and how the bytes of a reply are cut across
 * reads is the kernel's and the runtime's business. Here a relay in front of the server cuts
 * every reply at every byte (one byte per write), then lets many replies through in one write;
 * every reply must arrive whole, with its own data, in the order of its request.
 */
import { createServer, connect as netConnect, type Socket } from 'node:net';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import {
  onCleanup,
  openClient,
  record,
  statesOf,
  testRoot,
  transportName,
} from '../../test/support';

/** How the relay passes the server's bytes on to the client. */
type Delivery = (chunk: Buffer, client: Socket) => void;

/** One byte per write, a turn of the event loop between two: each byte its own segment. */
function byteByByte(): Delivery {
  let queue = Promise.resolve();
  return (chunk, client) => {
    queue = queue.then(async () => {
      for (const byte of chunk) {
        if (client.destroyed) return;
        client.write(Buffer.of(byte));
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
  };
}

/** Everything the server sent within `ms`, in one write. */
function inBatches(ms: number): Delivery {
  let held: Buffer[] = [];
  return (chunk, client) => {
    held.push(chunk);
    if (held.length > 1) return; // a batch is on its way
    setTimeout(() => {
      const batch = Buffer.concat(held);
      held = [];
      if (!client.destroyed) client.write(batch);
    }, ms);
  };
}

/** A relay to `target`: client bytes straight on, server bytes through `deliver`. */
async function relay(target: string, deliver: () => Delivery): Promise<string> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.split(':').pop())];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = netConnect({ host, port });
    const pass = deliver();
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => pass(chunk, client));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('close', () => b.destroy());
      a.on('error', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address() as { port: number };
  return `127.0.0.1:${address.port}`;
}

/** `count` nodes of distinct data (sizes 1 to `maxBytes`) under a fresh root. */
async function distinctNodes(connect: string, count: number, maxBytes: number) {
  const root = await testRoot(connect);
  const writer = await openClient({ connect });
  const nodes = Array.from({ length: count }, (_, i) => ({
    path: `${root}/n${i}`,
    data: Buffer.from(
      `${i}:`.padEnd(1 + ((i * 97) % maxBytes), String.fromCharCode(97 + (i % 26))),
    ),
  }));
  await Promise.all(nodes.map(({ path, data }) => writer.promises.create(path, data)));
  return nodes;
}

describe.runIf(transportName === 'typescript')('replies as the socket hands them over', () => {
  // A reply trickling in a byte at a time is no frame until its last byte, and the read timeout
  // counts from the last whole frame: cut at every byte, every get is its own request (no
  // multiRead: a batch's one reply of several KB could trickle past the read timeout on a busy
  // machine, drop the connection and retry the gets on the next one — no longer the reads of
  // one connection), each reply a few hundred bytes at most.
  for (const [name, delivery, count, maxBytes, batchReads] of [
    ['cut at every byte', byteByByte, 24, 300, false],
    ['many in one read', () => inBatches(20), 200, 1_000, true],
  ] as const) {
    it(`arrive whole and in order: ${name} (Node ${process.versions.node})`, async () => {
      const { connectString } = await testZooKeeper();
      const nodes = await distinctNodes(connectString, count, maxBytes);
      const client = await openClient({
        connect: await relay(connectString, delivery),
        sessionTimeoutMs: 10_000,
        batchReads,
      });
      await client.connected(20_000);
      const states = record(client.session$);
      const order: number[] = [];
      const replies = await Promise.all(
        nodes.map(({ path }, i) =>
          client.promises.get(path).then((reply) => {
            order.push(i);
            return reply.data;
          }),
        ),
      );
      for (const [i, { data }] of nodes.entries()) expect(replies[i]?.equals(data)).toBe(true);
      expect(order).toEqual(nodes.map((_, i) => i));
      expect(statesOf(states)).toEqual(['connected']);
    });
  }
});
