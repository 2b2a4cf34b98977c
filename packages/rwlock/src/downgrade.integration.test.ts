/**
 * Attacks on the downgrade's shortcut (a read lock granted at once to the write holder): its
 * argument is that our write node still exists when the read node is, so nobody is before it.
 */
import {
  childrenOf,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  untilEmpty,
} from '@zkrx/test-support';
import { describe, expect, it, vi } from 'vitest';
import { acquireRead, acquireWrite, LockLostError } from './index';

describe('downgrade (read lock taken by the write holder)', () => {
  it('is refused when the write node was deleted before the client heard of it', async () => {
    const { client: holder, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const [writer, operator] = await connectedClients(2);
    const path = lockPath('rw');
    const write = await acquireWrite(holder, path);
    const waiting = acquireWrite(writer!, path);
    await vi.waitUntil(async () => (await childrenOf(operator!, path)).length === 2);
    // The holder hears nothing while its write node is deleted and the next writer goes in.
    proxy.pause();
    await operator!.promises.delete(write.node);
    const next = await waiting;
    const downgraded = write.run(() => acquireRead(holder, path));
    proxy.resume();
    await expect(downgraded).rejects.toBeInstanceOf(LockLostError);
    expect(next.isHeld).toBe(true);
    // The refused read node goes in the background: its delete is sent as the call rejects, and
    // another session's listing may be served before the server applies it.
    await vi.waitUntil(async () => (await childrenOf(operator!, path)).length === 1);
    expect(await childrenOf(operator!, path)).toEqual([next.node.split('/').at(-1)]);
    await next.release();
    await untilEmpty(operator!, path);
  });

  it('adopts its read node when the create was applied and its reply lost', async () => {
    const { client: holder, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const operator = await connectedClient();
    const path = lockPath('rw');
    // Kept across the connection loss to come (by default a suspended write lease is lost).
    const write = await acquireWrite(holder, path, { onSuspended: 'continue' });
    proxy.holdReplies();
    const downgraded = write.run(() => acquireRead(holder, path));
    await vi.waitUntil(async () => (await childrenOf(operator, path)).length === 2);
    proxy.cut();
    proxy.holdReplies(false);
    const read = await downgraded;
    expect(read.isHeld).toBe(true);
    // One read node, the one it holds: no orphan of the first create.
    const names = await childrenOf(operator, path);
    expect(names).toHaveLength(2);
    expect(names).toContain(read.node.split('/').at(-1));
    await write.release();
    await read.release();
    await untilEmpty(operator, path);
  });
});
