/**
 * `await lease.release()` means released: it resolves once the server removed the node, so any
 * session's read from then on sees it gone — or once the session is gone; the next waiter's turn
 * never waits for it.
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
import { acquire, acquireAll, acquireSemaphore, mutex } from './index';

describe('await lease.release()', () => {
  it("resolves only once the server removed the node: another session's listing right after never shows it", async () => {
    // The releasing client's requests are held on their way (as on a farther network): the
    // release cannot resolve before its delete reached the server and the reply came back.
    const { client: a, proxy } = await proxiedClient();
    const b = await connectedClient();
    const path = lockPath();
    const lease = await acquire(a, path);
    proxy.pause();
    let released = false;
    const releasing = lease.release().then(() => {
      released = true;
    });
    // The lease is over here at once; its node is still on the server, and the release waits.
    expect(lease.state).toBe('released');
    expect(await childrenOf(b, path)).toHaveLength(1);
    expect(released).toBe(false);
    proxy.resume();
    await releasing;
    expect(await childrenOf(b, path)).toEqual([]);
    // Idempotent: the same answer again.
    await lease.release();
  });

  it('resolves for a semaphore once its lease node is gone, and for a multi-lock once all are', async () => {
    const { client: a, proxy } = await proxiedClient();
    const b = await connectedClient();
    const path = lockPath('sem');
    const lease = await acquireSemaphore(a, path, { leases: 2 });
    proxy.pause();
    const settled: string[] = [];
    const releasing = lease.release().then(() => settled.push('semaphore'));
    expect(await childrenOf(b, `${path}/leases`)).toHaveLength(1);
    expect(settled).toEqual([]);
    proxy.resume();
    await releasing;
    expect(await childrenOf(b, `${path}/leases`)).toEqual([]);

    const paths = [lockPath('x'), lockPath('y'), lockPath('z')];
    const all = await acquireAll(a, paths);
    proxy.pause();
    const releasingAll = all.release().then(() => settled.push('multi-lock'));
    for (const each of paths) expect(await childrenOf(b, each)).toHaveLength(1);
    expect(settled).toEqual(['semaphore']);
    proxy.resume();
    await releasingAll;
    for (const each of paths) expect(await childrenOf(b, each)).toEqual([]);
  });

  it('a re-entrant count-down resolves at once, the node staying for the outer lease', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const outer = await acquire(a!, path);
    const inner = await outer.run(() => acquire(a!, path));
    await inner.release();
    expect(outer.isHeld).toBe(true);
    expect(await childrenOf(b!, path)).toHaveLength(1);
    await outer.release();
    expect(await childrenOf(b!, path)).toEqual([]);
  });

  it('hands the lock to the next waiter without waiting for the release to be awaited', async () => {
    // The holder's replies are held: its release cannot resolve, yet the waiter on another
    // session is told as the node goes, and holds.
    const { client: a, proxy } = await proxiedClient();
    const b = await connectedClient();
    const path = lockPath();
    const lease = await acquire(a, path);
    const next = acquire(b, path);
    await vi.waitUntil(async () => (await childrenOf(b, path)).length === 2);
    proxy.holdReplies(true);
    const releasing = lease.release();
    const taken = await next;
    expect(taken.isHeld).toBe(true);
    proxy.holdReplies(false);
    await releasing;
    await taken.release();
    expect(await childrenOf(b, path)).toEqual([]);
  });

  it('with the connection down, resolves once the servers may have expired the session; the node goes with it', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 2_000 });
    const b = await connectedClient();
    const path = lockPath();
    const lease = await acquire(a, path, { onSuspended: 'continue' });
    proxy.refuse(true);
    proxy.cut();
    await lease.release();
    // Not the delete (nothing reached the server): the session's time ran out on its servers.
    expect(a.sessionSurvivesMs ?? 0).toBeLessThanOrEqual(0);
    proxy.refuse(false);
    await untilEmpty(b, path);
  });

  it('the observable form releases on unsubscribe, in the background', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const held: string[] = [];
    const subscription = mutex(a!, path).subscribe((lease) => held.push(lease.node));
    await vi.waitUntil(() => held.length === 1);
    subscription.unsubscribe();
    await untilEmpty(b!, path);
  });
});
