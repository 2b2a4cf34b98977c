/**
 * acquireWhileConnected — how the adapters wait for a request's lock: an outage answers at
 * once instead of after `timeoutMs`, and leaves nothing behind. nodeName against the server.
 */
import { isZkError } from '@zkrx/core';
import { childrenOf, connectedClient, lockPath, proxiedClient } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { acquireWhileConnected, retryLaterOf } from './adapter';
import { acquire, nodeName, tryAcquire } from './index';

// Longer than the test's own timeout: a wait that did not answer at once fails the test.
const longMs = 10 * 60_000;

const unavailable = (error: unknown) =>
  isZkError(error) && retryLaterOf(error)?.reason === 'zookeeper-unavailable';

describe('acquireWhileConnected', () => {
  it('rejects at once while the client is not connected, and sends nothing', async () => {
    const { client, proxy } = await proxiedClient();
    const path = lockPath();
    proxy.refuse(true);
    proxy.cut();
    await new Promise<void>((resolve) => {
      const subscription = client.session$.subscribe(({ state }) => {
        if (state !== 'suspended') return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      });
    });
    let took = false;
    await expect(
      acquireWhileConnected(client, (signal) => {
        took = true;
        return acquire(client, path, { timeoutMs: longMs, signal });
      }),
    ).rejects.toSatisfy(unavailable);
    expect(took).toBe(false);
    proxy.refuse(false);
    await client.connected();
    expect(await client.promises.exists(path)).toBeNull();
  });

  it('rejects at once when the connection drops during the wait; its node goes', async () => {
    const holder = await connectedClient();
    const { client, proxy } = await proxiedClient();
    const path = lockPath();
    const held = await acquire(holder, path);
    const waiting = acquireWhileConnected(client, (signal) =>
      acquire(client, path, { timeoutMs: longMs, signal }),
    );
    // Queued behind the holder: two nodes.
    await new Promise<void>((resolve) => {
      const subscription = holder.watchChildren(path).subscribe((names) => {
        if (names.length < 2) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      });
    });
    proxy.cut();
    await expect(waiting).rejects.toSatisfy(unavailable);
    await client.connected();
    // The waiter's node is removed once the connection is back: only the holder's stays.
    await new Promise<void>((resolve) => {
      const subscription = holder.watchChildren(path).subscribe((names) => {
        if (names.length !== 1) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      });
    });
    expect(await childrenOf(holder, path)).toEqual([held.node.split('/').at(-1)]);
    await held.release();
  });

  it('resolves what the take gives while connected (a lease, or null when busy)', async () => {
    const [a, b] = [await connectedClient(), await connectedClient()];
    const path = lockPath();
    const lease = await acquireWhileConnected(a, (signal) => acquire(a, path, { signal }));
    expect(lease.isHeld).toBe(true);
    expect(await acquireWhileConnected(b, () => tryAcquire(b, path))).toBeNull();
    await lease.release();
    expect(await childrenOf(a, path)).toEqual([]);
  });
});

describe('nodeName on the server', () => {
  it('makes every id one lock of its own, one level under the base', async () => {
    const client = await connectedClient();
    const base = lockPath('orders');
    const ids = ['42', 'a/b', '', '.', '..', 'x__lock__0000000001', 'ü'];
    const leases = [];
    for (const id of ids) leases.push(await acquire(client, `${base}/${nodeName(id)}`));
    expect((await childrenOf(client, base)).sort()).toEqual(ids.map(nodeName).sort());
    for (const lease of leases) await lease.release();
  });
});
