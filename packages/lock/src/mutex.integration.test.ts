import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  sleep,
} from '@zkrx/test-support';
import { describe, expect, it, vi } from 'vitest';
import { acquire, type Lease, mutex, tryAcquire } from './index';

describe('mutex', () => {
  it('never lets two of 20 sessions hold at once, and fencing tokens increase in holding order', async () => {
    const clients = await connectedClients(20);
    const path = lockPath();
    const log = new IntervalLog(1);
    await Promise.all(
      clients.map(async (client, index) => {
        for (let round = 0; round < 50; round++) {
          const lease = await acquire(client, path);
          const record = log.enter(`c${index}`, lease.fencingToken);
          if (round % 10 === 0) await sleep(1);
          log.exit(record);
          await lease.release();
        }
      }),
    );
    expect(log.violations).toEqual([]);
    expect(log.holds).toHaveLength(1000);
    const tokens = log.holds.map((hold) => hold.token);
    for (let i = 1; i < tokens.length; i++)
      expect(tokens[i]).toBeGreaterThan(tokens[i - 1] as number);
    // Every release was awaited: each node was gone before its holder went on.
    expect(await childrenOf(clients[0]!, path)).toEqual([]);
  });

  it('emits the lease once held and releases on unsubscribe', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const leases: Lease[] = [];
    const subscription = mutex(a!, path).subscribe((lease) => leases.push(lease));
    await vi.waitUntil(() => leases.length === 1);
    expect(leases[0]!.isHeld).toBe(true);
    expect(await tryAcquire(b!, path)).toBeNull();
    expect(await childrenOf(a!, path)).toHaveLength(1);
    subscription.unsubscribe();
    expect(leases[0]!.isHeld).toBe(false);
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 0);
    const second = await tryAcquire(b!, path);
    expect(second).not.toBeNull();
    await second?.release();
    expect(await childrenOf(a!, path)).toEqual([]);
  });

  it('uses Curator names', async () => {
    const client = await connectedClient();
    const path = lockPath();
    const lease = await acquire(client, path);
    const [name] = await childrenOf(client, path);
    expect(name).toMatch(/^_c_[0-9a-f-]{36}-lock-\d{10}$/);
    expect(lease.node).toBe(`${path}/${name}`);
    await lease.release();
  });
});
