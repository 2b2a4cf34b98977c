/**
 * Test support for the lock recipes: clients on the run's ZooKeeper that close themselves after
 * each test, and the children of a lock path.
 */
import { createClient, type ZkClient, type ZkClientOptions } from '@zkrx/core';
import { startProxy, type TcpProxy, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { afterEach } from 'vitest';

const open = new Set<ZkClient>();
const proxies = new Set<TcpProxy>();

afterEach(async () => {
  // Proxies are cut first: the C client's close waits for the server's answer, which a proxy in
  // this (blocked) process could not relay.
  const cut = [...proxies];
  proxies.clear();
  for (const proxy of cut) {
    proxy.refuse(true);
    proxy.cut();
  }
  const clients = [...open];
  open.clear();
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(cut.map((proxy) => proxy.close()));
});

/** A connected client on the test ZooKeeper, closed after the test. */
export async function connectedClient(options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  const { connectString } = await testZooKeeper();
  const client = createClient({ connect: connectString, sessionTimeoutMs: 4_000, ...options });
  open.add(client);
  await client.connected();
  return client;
}

/**
 * A connected client that reaches the test ZooKeeper through its own fault-injecting proxy
 * (`cut`, `pause`, `refuse`, `holdReplies`); both are closed after the test.
 */
export async function proxiedClient(
  options: Partial<ZkClientOptions> = {},
): Promise<{ client: ZkClient; proxy: TcpProxy }> {
  const { connectString } = await testZooKeeper();
  const proxy = await startProxy(connectString);
  proxies.add(proxy);
  const client = await connectedClient({ ...options, connect: proxy.connectString });
  return { client, proxy };
}

/** `count` connected clients (each its own session). */
export function connectedClients(
  count: number,
  options: Partial<ZkClientOptions> = {},
): Promise<ZkClient[]> {
  return Promise.all(Array.from({ length: count }, () => connectedClient(options)));
}

/**
 * Options under which a client reads the ensemble's configuration at once after connecting
 * (`followEnsemble` reads it, a `sync` and a `getConfig`, after every connection: up to 1 s later
 * by default). With {@link configurationRead} after `connected()`, a test that counts a
 * session's requests or packets counts only its own.
 */
export const readsConfigurationAtOnce: Partial<ZkClientOptions> = {
  followEnsemble: { maxDelayMs: 0 },
};

/**
 * Resolves once the configuration read a client made on connecting (under
 * {@link readsConfigurationAtOnce}) is answered: the follower's timer of 0 ms was set when the
 * session connected, before this one of 1 ms, and Node fires timers in the order they fall due,
 * so the `exists` sent after it follows the `sync` and `getConfig` on the wire and ZooKeeper
 * answers one session's requests in order.
 */
export async function configurationRead(client: ZkClient): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  await client.promises.exists('/');
}

/** A fresh lock path under a unique root. */
export function lockPath(name = 'lock'): string {
  return `${uniqueRoot('locks')}/${name}`;
}

/** The children of a path (none if it does not exist). */
export async function childrenOf(client: ZkClient, path: string): Promise<string[]> {
  return (await client.promises.exists(path)) ? client.promises.children(path) : [];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
