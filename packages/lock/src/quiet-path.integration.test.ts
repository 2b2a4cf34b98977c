import { childrenOf, connectedClients, lockPath } from '@zkrx/test-support';
import { mntr, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire, tryAcquire } from './index';

describe('an uncontended lock taken again by the same session', () => {
  it('skips the listing (two server packets per acquire+release instead of three)', async () => {
    const { connectString } = await testZooKeeper();
    const [client] = await connectedClients(1, { sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const first = await acquire(client!, path);
    await first.release();
    const idle = [await mntr(connectString), await mntr(connectString)];
    const mntrCost = Number(idle[1]!.zk_packets_sent) - Number(idle[0]!.zk_packets_sent);
    const perRound: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = await mntr(connectString);
      for (let i = 0; i < 20; i++) {
        const lease = await acquire(client!, path);
        expect(lease.isHeld).toBe(true);
        await lease.release();
      }
      const after = await mntr(connectString);
      perRound.push(
        (Number(after.zk_packets_sent) - Number(before.zk_packets_sent) - mntrCost) / 20,
      );
    }
    // A create reply and a delete reply each (pings may land in a window: the quietest counts).
    expect(Math.min(...perRound)).toBe(2);
  });

  it('notices anyone who came in between, and waits for them', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const alone = await acquire(a!, path);
    await alone.release();
    // b takes the lock: a's next node is not the very next sequence any more.
    const other = await acquire(b!, path);
    expect(await tryAcquire(a!, path)).toBeNull();
    const waiting = acquire(a!, path);
    expect(
      await Promise.race([
        waiting.then(() => 'held'),
        new Promise((r) => setTimeout(() => r('waiting'), 200)),
      ]),
    ).toBe('waiting');
    await other.release();
    const lease = await waiting;
    expect(await childrenOf(b!, path)).toEqual([lease.node.split('/').at(-1)]);
    await lease.release();
    // And someone who came and went in between (a create, then a delete) is noticed too.
    const again = await acquire(a!, path);
    await again.release();
    const passer = await acquire(b!, path);
    await passer.release();
    const after = await acquire(a!, path);
    expect(after.isHeld).toBe(true);
    await after.release();
  });
});
