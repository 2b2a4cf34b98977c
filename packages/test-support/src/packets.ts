/**
 * What the server sends one client, counted on the wire: a relay between a client and the run's
 * ZooKeeper that counts the server's packets (replies and watch notifications, pings left out),
 * as `mntr`'s `zk_packets_sent` counts them but for that client alone and without the pings that
 * land in a window on a slow machine.
 */
import { createClient, type ZkClient, type ZkClientOptions } from '@zkrx/core';
import { testZooKeeper } from '@zkrx/testing';
import { afterEach } from 'vitest';
import { configurationRead, readsConfigurationAtOnce } from './clients';
import { frameRelay } from './relay';

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
  const packets: PacketCount = {
    replies: 0,
    notifications: 0,
    get total() {
      return this.replies + this.notifications;
    },
  };
  // The server's frames to the session's connection (the ConnectResponse, frame 0, left out).
  const relay = await frameRelay(target, {
    reply: (body, _link, frame) => {
      if (frame > 0) {
        const xid = body.readInt32BE(0);
        if (xid === -1) packets.notifications += 1;
        else if (xid !== -2) packets.replies += 1;
      }
      return body;
    },
  });
  const client = createClient({
    connect: relay.connectString,
    sessionTimeoutMs: 10_000,
    ...readsConfigurationAtOnce,
    ...options,
  });
  taps.add(async () => {
    await client.close();
    await relay.close();
  });
  await client.connected();
  // The configuration's read after connecting (2 packets, once per connection) is not the
  // tests' to count.
  if (options.followEnsemble !== false) await configurationRead(client);
  return { client, packets };
}
