/**
 * What a server of another version or mode says must not cost a holder its lock, nor be taken
 * for more than it is (issue 26): a 3.5 server knows no multiRead and closes the connection of a
 * session that sends one; a read-only server confirms nothing of a session's nodes.
 */
import type { ZkClient } from '@zkrx/core';
import { connectedClient, lockPath, readOnlyOnReconnect, zooKeeper35 } from '@zkrx/test-support';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire, type LeaseState, LockLostError } from './index';

/** A client that says, in a debug line, what it made of its server's multiRead. */
async function clientSaying(connect: string, options: { canBeReadOnly?: boolean } = {}) {
  const lines: string[] = [];
  const said = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const check = () => (lines.some((line) => pattern.test(line)) ? resolve() : undefined);
      waiting.push(check);
      check();
    });
  const waiting: Array<() => void> = [];
  const client = await connectedClient({
    connect,
    sessionTimeoutMs: 6_000,
    ...options,
    logLevel: 'debug',
    logger: {
      debug: (message: string) => {
        lines.push(message);
        for (const check of waiting) check();
      },
    },
  });
  return { client, said };
}

async function nodes(client: ZkClient, names: readonly string[]): Promise<string> {
  const root = uniqueRoot('versions');
  await client.promises.create(root);
  for (const name of names) await client.promises.create(`${root}/${name}`, name);
  return root;
}

describe('servers of other versions and modes', () => {
  it('sends no multiRead to a 3.5 server (it would close the connection): a held lock stays held', async () => {
    const server = await zooKeeper35((await testZooKeeper()).connectString);
    const { client, said } = await clientSaying(server.connectString);
    const states: string[] = [];
    client.session$.subscribe(({ state }) => states.push(state));
    const lease = await acquire(client, lockPath());
    const leaseStates: LeaseState[] = [];
    lease.state$.subscribe((state) => leaseStates.push(state));
    const root = await nodes(client, ['a', 'b', 'c']);
    const read = () =>
      Promise.all(['a', 'b', 'c'].map((name) => client.promises.get(`${root}/${name}`)));
    // Gets of one turn, before and after the server said its version.
    await read();
    await said(/^not batching reads on .*: ZooKeeper 3\.5 has no multiRead/);
    const values = await read();
    expect(values.map((value) => value.data.toString())).toEqual(['a', 'b', 'c']);
    expect(server.multiReads).toBe(0);
    expect(states).toEqual(['connected']);
    expect(leaseStates).toEqual(['held']);
    await lease.release();
    for (const name of ['a', 'b', 'c']) await client.promises.delete(`${root}/${name}`);
    await client.promises.delete(root);
  });

  it("confirms nothing on a read-only server: a 'continue' lease stays suspended there and lets go in time", async () => {
    // The relay sets the read-only flag of every reconnection's ConnectResponse: the client is
    // told it reached a read-only server, whose copy of the tree still shows the lease's node.
    const relay = await readOnlyOnReconnect((await testZooKeeper()).connectString);
    const { client } = await clientSaying(relay.connectString, { canBeReadOnly: true });
    const states: string[] = [];
    client.session$.subscribe(({ state }) => states.push(state));
    const lease = await acquire(client, lockPath(), { onSuspended: 'continue' });
    const leaseStates: LeaseState[] = [];
    lease.state$.subscribe((state) => leaseStates.push(state));
    const lost = new Promise<unknown>((resolve) =>
      lease.signal.addEventListener('abort', () => resolve(lease.signal.reason), { once: true }),
    );
    // The connection drops; the client comes back "read-only".
    relay.cut();
    const reason = await lost;
    expect(states.slice(0, 3)).toEqual(['connected', 'suspended', 'read-only']);
    expect(leaseStates).toEqual(['held', 'suspended', 'lost']);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect((reason as LockLostError).reason).toBe('suspended');
  });
});
