/**
 * What the server sends one client, counted on the wire: a relay between a client and the run's
 * ZooKeeper that counts the server's packets (replies and watch notifications, pings left out),
 * as `mntr`'s `zk_packets_sent` counts them but for that client alone and without the pings that
 * land in a window on a slow machine.
 */
import { connect, createServer, type Socket } from 'node:net';
import { createClient, type ZkClient, type ZkClientOptions } from '@zkrx/core';
import { testZooKeeper } from '@zkrx/testing';
import { afterEach } from 'vitest';

/** The server's packets to one client so far (the session's ConnectResponse and pings left out). */
export interface PacketCount {
  /** Replies to the client's requests. */
  replies: number;
  /** Watch notifications. */
  notifications: number;
  /** Both: what the server sent. */
  readonly total: number;
}

const taps = new Set<() => Promise<void>>();

afterEach(async () => {
  const closing = [...taps];
  taps.clear();
  await Promise.all(closing.map((close) => close()));
});

/**
 * A connected client whose traffic passes through a counting relay to the test ZooKeeper:
 * `packets` counts what the server sent it from then on. Client and relay are closed after the
 * test.
 */
export async function countedClient(
  options: Partial<ZkClientOptions> = {},
): Promise<{ client: ZkClient; packets: PacketCount }> {
  const target = (await testZooKeeper()).connectString.split(',')[0] as string;
  const host = target.slice(0, target.lastIndexOf(':'));
  const port = Number(target.slice(target.lastIndexOf(':') + 1));
  const packets: PacketCount = {
    replies: 0,
    notifications: 0,
    get total() {
      return this.replies + this.notifications;
    },
  };
  const sockets = new Set<Socket>();
  const relay = createServer((socket) => {
    const upstream = connect({ host, port });
    sockets.add(socket).add(upstream);
    let pending = Buffer.alloc(0);
    let first = true;
    socket.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      socket.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const length = pending.readInt32BE(0);
        const xid = pending.readInt32BE(4);
        pending = pending.subarray(4 + length);
        if (first) {
          first = false; // the ConnectResponse
          continue;
        }
        if (xid === -1) packets.notifications += 1;
        else if (xid !== -2) packets.replies += 1;
      }
    });
    for (const [one, other] of [
      [socket, upstream],
      [upstream, socket],
    ] as const) {
      one.on('error', () => other.destroy());
      one.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const address = relay.address() as { port: number };
  const client = createClient({
    connect: `127.0.0.1:${address.port}`,
    sessionTimeoutMs: 10_000,
    ...options,
  });
  taps.add(async () => {
    await client.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => relay.close(resolve));
  });
  await client.connected();
  return { client, packets };
}
