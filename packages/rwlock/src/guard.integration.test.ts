/**
 * Guarded writes under the read-write lock: each lease (read, write, downgraded read) guards by
 * its own node; a writer that lost its lock writes nothing, even before it heard of the loss.
 */
import { isZkError, op, type ZkClient } from '@zkrx/core';
import { childrenOf, connectedClients, lockPath, proxiedClient } from '@zkrx/test-support';
import { expireSession, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquireRead, acquireWrite, LockLostError } from './index';

async function scratch(client: ZkClient): Promise<string> {
  const root = uniqueRoot('guarded');
  await client.promises.create(root);
  return root;
}

async function removeScratch(client: ZkClient, root: string): Promise<void> {
  for (const child of await childrenOf(client, root)) {
    await client.promises.delete(`${root}/${child}`);
  }
  await client.promises.delete(root);
}

describe('guarded writes under a read-write lock', () => {
  it('guards read, write and downgraded read leases by their own nodes', async () => {
    const [client, reader] = await connectedClients(2);
    const root = await scratch(client!);
    const path = lockPath('rw');
    const write = await acquireWrite(client!, path);
    await write.guard([op.create(`${root}/by-writer`)]);
    const downgraded = await write.run(() => acquireRead(client!, path));
    expect(downgraded.node).not.toBe(write.node);
    await write.release();
    await downgraded.guard([op.create(`${root}/by-downgraded-reader`)]);
    const read = await acquireRead(reader!, path);
    await read.guard([op.create(`${root}/by-reader`)]);
    expect(await childrenOf(client!, root)).toEqual([
      'by-downgraded-reader',
      'by-reader',
      'by-writer',
    ]);
    await downgraded.release();
    await read.release();
    await removeScratch(client!, root);
  });

  it('a writer whose session was expired on the server writes nothing, though it had not heard of it', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const [next] = await connectedClients(1);
    const { connectString } = await testZooKeeper();
    const root = await scratch(next!);
    await next!.promises.create(`${root}/catalog`, 'v1');
    const path = lockPath('rw');
    const write = await acquireWrite(client, path);
    proxy.pause();
    await expireSession({ connectString, ...client.sessionCredentials()! });
    const taken = await acquireWrite(next!, path);
    await taken.guard([op.set(`${root}/catalog`, 'v2')]);
    expect(write.isHeld).toBe(true);
    const stale = write.guard([op.set(`${root}/catalog`, 'stale')]).catch((caught) => caught);
    proxy.resume();
    const error = await stale;
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(isZkError((error as Error).cause, 'ConnectionLoss')).toBe(true);
    expect((await next!.promises.get(`${root}/catalog`)).data.toString()).toBe('v2');
    await taken.release();
    await next!.promises.delete(`${root}/catalog`);
    await removeScratch(next!, root);
  });

  it('a reader whose node an operator deleted writes nothing', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const [operator] = await connectedClients(1);
    const root = await scratch(operator!);
    const read = await acquireRead(client, lockPath('rw'));
    proxy.pause();
    await operator!.promises.delete(read.node);
    const late = read.guard([op.create(`${root}/late`)]).catch((caught) => caught);
    proxy.resume();
    expect(await late).toMatchObject({ name: 'LockLostError', reason: 'node-deleted' });
    expect(await childrenOf(operator!, root)).toEqual([]);
    await removeScratch(operator!, root);
  });
});
