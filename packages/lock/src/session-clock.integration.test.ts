/**
 * A holder never outlives its session (issue 26): whatever this process or the network does,
 * a lease lets go before the servers could have expired its session and handed the lock on —
 * timed from when the servers last surely heard from the session, not from when the client
 * noticed the silence, and not put off by this process's own stalls.
 */
import { op, type ZkClient } from '@zkrx/core';
import { connectedClient, lockPath, proxiedClient } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire, LockLostError } from './index';

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the process is stalled: no timer, no I/O
  }
}

/** Resolves once `signal` aborts. */
function abortOf(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(signal.reason);
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

/**
 * Resolves after the heartbeat's first check following a stall that just ended: its tick runs
 * in the next timers phase and checks in the check phase after; an immediate queued from a
 * check phase runs in the one after that.
 */
function afterNextCheckPhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

async function scratchNode(client: ZkClient): Promise<string> {
  const path = uniqueRoot('session-clock');
  await client.promises.create(path, 'before');
  return path;
}

describe('a holder and its session clock', () => {
  it("under 'continue', lets go before the server could expire the session: the next holder gets the lock after", async () => {
    // The server goes silent (no FIN). The client notices only after its read timeout; the
    // server expires the session a whole timeout after it last heard from it. A 'continue'
    // lease must be over before then — timed from what the server last heard, not from the
    // suspension.
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 6_000 });
    const next = await connectedClient();
    const path = lockPath();
    const lease = await acquire(client, path, { onSuspended: 'continue' });
    const order: string[] = [];
    const lost = abortOf(lease.signal).then((reason) => {
      order.push('first holder let go');
      return reason;
    });
    const taken = acquire(next, path, { timeoutMs: 60_000 }).then((held) => {
      order.push('next holder holds');
      return held;
    });
    proxy.pause();
    const [reason, nextLease] = await Promise.all([lost, taken]);
    expect(order).toEqual(['first holder let go', 'next holder holds']);
    expect(LockLostError.isInstance(reason)).toBe(true);
    expect((reason as LockLostError).reason).toBe('suspended');
    await nextLease.release();
    proxy.resume();
  });

  it.each([
    ['the server alive', false],
    ['the server gone without a FIN', true],
  ])(
    'a stall longer than the session timeout (%s): the signal aborts at the first heartbeat check after it, and a guard made in between writes nothing',
    async (_, serverGone) => {
      const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
      const observer = await connectedClient();
      const data = await scratchNode(observer);
      const lease = await acquire(client, lockPath());
      const signal = lease.signal;
      if (serverGone) proxy.pause();
      // Due during the stall: it runs right after it, before the heartbeat's check.
      let guarded: Promise<unknown> | undefined;
      setTimeout(() => {
        guarded = lease.guard([op.set(data, 'written after the stall')]).then(
          () => 'written',
          (error: unknown) => error,
        );
      }, 100);
      busyWait(5_000);
      await afterNextCheckPhase();
      expect(signal.aborted).toBe(true);
      expect(LockLostError.isInstance(signal.reason)).toBe(true);
      const outcome = await guarded;
      expect(LockLostError.isInstance(outcome)).toBe(true);
      proxy.resume();
      await observer.promises.sync(data);
      expect((await observer.promises.get(data)).data.toString()).toBe('before');
      await observer.promises.delete(data);
    },
  );
});
