import { childrenOf, connectedClient, lockPath, sleep, untilEmpty } from '@zkrx/test-support';
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { acquire, type Lease, type LeaseState } from './index';

describe('mutex on a 3-server ensemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3 });
  });
  afterAll(async () => {
    await ensemble?.close();
  });

  it('keeps the lock when the holder’s server stops (suspended → reconnected, same session), and nobody else gets in', async () => {
    const holder = await connectedClient({
      connect: ensemble.connectString,
      sessionTimeoutMs: 8_000,
    });
    const other = await connectedClient({
      connect: ensemble.connectString,
      sessionTimeoutMs: 8_000,
    });
    const path = lockPath();
    const lease = await acquire(holder, path, { onSuspended: 'continue' });
    const leaseStates: LeaseState[] = [];
    lease.state$.subscribe((state) => leaseStates.push(state));
    const sessionStates: string[] = [];
    holder.session$.subscribe(({ state }) => sessionStates.push(state));
    const sessionId = holder.sessionId;
    let contender: Lease | undefined;
    const waiting = acquire(other, path).then((acquired) => {
      contender = acquired;
      return acquired;
    });
    // Should the test fail before it is awaited, closing the client rejects it: not unhandled.
    waiting.catch(() => {});
    await vi.waitUntil(async () => (await childrenOf(other, path)).length === 2);
    const attached = await ensemble.serverOf(sessionId as string);
    expect(attached).toBeDefined();
    await ensemble.stopServer(attached as number);
    await vi.waitUntil(() => sessionStates.includes('reconnected'), {
      timeout: 15_000,
      interval: 50,
    });
    expect(sessionStates).toEqual(['connected', 'suspended', 'reconnected']);
    expect(holder.sessionId).toBe(sessionId);
    // Back to held once the lease has checked its node is still there (a round trip).
    await vi.waitUntil(() => leaseStates.length >= 3);
    expect(leaseStates).toEqual(['held', 'suspended', 'held']);
    expect(lease.isHeld).toBe(true);
    await sleep(200);
    expect(contender).toBeUndefined();
    await lease.release();
    await (await waiting).release();
    await untilEmpty(other, path);
    await ensemble.startServer(attached as number);
  });
});
