/**
 * A deadline is a deadline, and a release is over when it returns: neither waits on a server that
 * does not answer. Proven by the order of events, not by a clock: the rejection or the release
 * comes while the server is still unreachable, so nothing but the deadline can have caused it.
 */
import { createClient, ZkErrorCode } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  lockPath,
  proxiedClient,
  untilEmpty,
} from '@zkrx/test-support';
import { startProxy, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { acquire, LockTimeoutError } from './index';

describe('the deadline of an acquisition', () => {
  it('holds while the server is blackholed mid-wait: LockTimeoutError before it answers again', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const path = lockPath();
    const held = await acquire(other, path);
    const pending = acquire(client, path, { timeoutMs: 300 }).catch((caught: unknown) => caught);
    await vi.waitUntil(async () => (await childrenOf(other, path)).length === 2);
    proxy.pause();
    const error = await pending;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(proxy.paused).toBe(true);
    proxy.resume();
    // The waiter's node goes once its connection is back.
    await held.release();
    await untilEmpty(other, path);
  });

  it('holds when the create itself goes unanswered', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const path = lockPath();
    proxy.pause();
    const error = await acquire(client, path, { timeoutMs: 300 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(proxy.paused).toBe(true);
    proxy.resume();
    // Whatever the create did once it arrives, nothing is left.
    await untilEmpty(other, path);
  });

  it.each([
    ['the deadline', 'timeout'],
    ['an abort', 'abort'],
  ])(
    'gives up by %s a create not yet written: withdrawn, it never lands (nothing to search for)',
    async (_, how) => {
      const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
      const other = await connectedClient();
      const path = lockPath();
      const held = await acquire(other, path);
      // Disconnected and kept so: the create waits in the client, unwritten, until it is given up.
      proxy.refuse(true);
      proxy.cut();
      await vi.waitUntil(() => client.state === 'suspended');
      const controller = new AbortController();
      const reason = new Error('not wanted any more');
      const pending = acquire(
        client,
        path,
        how === 'timeout' ? { timeoutMs: 300 } : { signal: controller.signal },
      ).catch((caught: unknown) => caught);
      if (how === 'abort') controller.abort(reason);
      const error = await pending;
      if (how === 'abort') expect(error).toBe(reason);
      else {
        expect(error).toBeInstanceOf(LockTimeoutError);
        // Not connected at any moment of the wait: unreachable, not a busy lock.
        expect((error as LockTimeoutError).cause).toMatchObject({
          code: ZkErrorCode.ConnectTimeout,
        });
      }
      expect(client.state).toBe('suspended');
      proxy.refuse(false);
      await vi.waitUntil(() => client.state === 'reconnected', { timeout: 10_000 });
      // Sent after the reconnection on the same session, so answered after anything sent before
      // it: had the create gone out, its node would be listed here.
      await client.promises.exists(path);
      expect(await childrenOf(other, path)).toEqual([held.node.slice(path.length + 1)]);
      await held.release();
      expect(await childrenOf(other, path)).toEqual([]);
    },
  );

  it('says when ZooKeeper was never reachable: the cause is ConnectTimeout, not a busy lock', async () => {
    const { connectString } = await testZooKeeper();
    const proxy = await startProxy(connectString);
    proxy.refuse(true);
    const client = createClient({
      connect: proxy.connectString,
      sessionTimeoutMs: 4_000,
      connectTimeoutMs: 60_000,
    });
    try {
      const error = await acquire(client, lockPath(), { timeoutMs: 300 }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect((error as LockTimeoutError).cause).toMatchObject({ code: ZkErrorCode.ConnectTimeout });
      expect(client.state).toBe('connecting');
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe('a release', () => {
  it('returns while the server is blackholed; the node goes once it answers again', async () => {
    // The release resolves on the client's session clock, a session timeout after the pause
    // (once the servers may have expired the session), not once the client's own retries of the
    // delete in flight give up: here they would go on for 10 minutes.
    const { client, proxy } = await proxiedClient({
      retry: { maxRetries: 10_000, maxElapsedMs: 600_000 },
    });
    const other = await connectedClient();
    const path = lockPath();
    const lease = await acquire(client, path, { onSuspended: 'continue' });
    proxy.pause();
    await lease.release();
    expect(lease.isHeld).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    expect(proxy.paused).toBe(true);
    proxy.resume();
    await untilEmpty(other, path);
  });
});
