/**
 * Revocation: a holder that opted in is asked to release, and decides when; others ignore it.
 */
import { childrenOf, connectedClients, lockPath } from '@zkrx/test-support';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { acquire, acquireSemaphore, LockRevokedError, requestRevoke, tryAcquire } from './index';

describe('revocation', () => {
  it('tells a revocable holder (revoked$, signal) and keeps it held until it releases', async () => {
    const [holder, other] = await connectedClients(2);
    const path = lockPath();
    const lease = await acquire(holder!, path, { revocable: true });
    const revoked = firstValueFrom(lease.revoked$);
    expect(await requestRevoke(other!, lease.node)).toBe(true);
    const error = await revoked;
    expect(error).toBeInstanceOf(LockRevokedError);
    expect(error).toMatchObject({ code: 'LockRevoked', reason: 'revoked', node: lease.node });
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBe(error);
    // Still held: the holder decides when to go.
    expect(lease.isHeld).toBe(true);
    expect(await tryAcquire(other!, path)).toBeNull();
    await lease.release();
    const next = await acquire(other!, path, { timeoutMs: 10_000 });
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('is ignored by a holder that did not opt in (Curator semantics)', async () => {
    const [holder, other] = await connectedClients(2);
    const path = lockPath();
    const plain = await acquire(holder!, path);
    // A revocable lease of the same client on another path is the gate: the client hears of
    // the two requests in the order they were made.
    const gate = await acquire(holder!, lockPath('gate'), { revocable: true });
    expect(await requestRevoke(other!, plain.node)).toBe(true);
    expect(await requestRevoke(other!, gate.node)).toBe(true);
    await firstValueFrom(gate.revoked$);
    expect(plain.signal.aborted).toBe(false);
    expect(plain.isHeld).toBe(true);
    await plain.release();
    await gate.release();
  });

  it('reaches a waiter once it holds: a request made while it waited stands', async () => {
    const [holder, waiter, other] = await connectedClients(3);
    const path = lockPath();
    const first = await acquire(holder!, path);
    let queued: string | undefined;
    const waiting = acquire(waiter!, path, {
      revocable: true,
      onQueued: (node) => {
        queued = node;
      },
    });
    await vi.waitUntil(() => queued !== undefined);
    expect(await requestRevoke(other!, queued!)).toBe(true);
    await first.release();
    const lease = await waiting;
    const error = await firstValueFrom(lease.revoked$);
    expect(error).toBeInstanceOf(LockRevokedError);
    await lease.release();
  });

  it('works on semaphore leases (which Curator cannot revoke)', async () => {
    const [holder, other] = await connectedClients(2);
    const path = lockPath('semaphore');
    const lease = await acquireSemaphore(holder!, path, { leases: 1, revocable: true });
    expect(await requestRevoke(other!, lease.node)).toBe(true);
    expect(await firstValueFrom(lease.revoked$)).toBeInstanceOf(LockRevokedError);
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });

  it('answers false for a node already gone, and refuses what is not a lock node', async () => {
    const [holder, other] = await connectedClients(2);
    const path = lockPath();
    const lease = await acquire(holder!, path);
    const node = lease.node;
    await lease.release();
    expect(await childrenOf(other!, path)).toEqual([]);
    expect(await requestRevoke(other!, node)).toBe(false);
    // Checked before anything is written: the lock path itself is not a lock node.
    await expect(requestRevoke(other!, path)).rejects.toMatchObject({ code: 'BadArguments' });
    await expect(requestRevoke(other!, 'no-slash')).rejects.toMatchObject({ code: 'InvalidPath' });
    await expect(requestRevoke({} as never, node)).rejects.toMatchObject({ code: 'BadArguments' });
  });
});
