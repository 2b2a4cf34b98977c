/**
 * `partition` through the days operators have (issue 32), one test per way the work used to stop
 * silently, each written to fail on the partitioner before it: a fleet started before ZooKeeper,
 * failures that must reach a user, poison reports that cannot be written, emissions with nothing
 * new.
 */
import { createServer } from 'node:net';
import { createClient, type ZkClient } from '@zkrx/core';
import { startZooKeeper, uniqueRoot, type ZooKeeperServer } from '@zkrx/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { converged, fleetLog, names, startMember } from '../test/fleet';

/** A loopback port nobody listens on now (the kernel's choice, released at once). */
function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const servers: ZooKeeperServer[] = [];
const clients: ZkClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('partition on the days operators have', () => {
  it('a fleet started before ZooKeeper elects a coordinator and balances once the server is up', async () => {
    const port = await unusedPort();
    const connect = `127.0.0.1:${port}`;
    // Members subscribed first, ZooKeeper unreachable for several connect timeouts (a whole
    // stack starting at once): every wait for a connection ends with ConnectTimeout meanwhile.
    let timeouts = 0;
    const members = ['a', 'b'].map(() => {
      const client = createClient({ connect, connectTimeoutMs: 300, sessionTimeoutMs: 4_000 });
      clients.push(client);
      const connected = client.connected.bind(client);
      client.connected = (timeoutMs?: number) =>
        connected(timeoutMs).catch((error: unknown) => {
          timeouts += 1;
          throw error;
        });
      return client;
    });
    const path = uniqueRoot('fleet');
    const items = names('shard', 6);
    const log = fleetLog();
    const fleet = members.map((client, index) =>
      startMember(log, client, path, items, { id: `m${index}` }),
    );
    // Each member's coordinator queue, member node and locks have waited more than twice.
    await vi.waitUntil(() => timeouts >= 12, { timeout: 30_000 });
    servers.push(await startZooKeeper({ port }));
    // Bounded: balanced soon after the server is up (the goal: < 5 s; generous here).
    await vi.waitUntil(() => converged(fleet, items), { timeout: 20_000 });
    expect(fleet.map((member) => member.state.error)).toEqual([undefined, undefined]);
    expect(log.violations).toEqual([]);
  });
});
