import { connectedClients, lockPath, untilEmpty } from '@zkrx/test-support';
import { fourLetterWord, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire } from './index';

/**
 * The requests a session made so far: its last request xid (`lcxid` in the server's `cons`). A
 * client numbers its requests 1, 2, 3…; pings (xid -2) and notifications leave it alone.
 */
async function requestsMade(connectString: string, sessionId: string): Promise<number> {
  const cons = await fourLetterWord(connectString, 'cons');
  const match = new RegExp(`sid=0x${sessionId},.*?lcxid=(0x[0-9a-f]+)`).exec(cons);
  if (!match) throw new Error(`session 0x${sessionId} not in cons:\n${cons}`);
  return Number(match[1]);
}

describe('what an uncontended lock costs the server', () => {
  it('five packets per acquire+release, the first time as the hundredth', async () => {
    const { connectString } = await testZooKeeper();
    const [client, observer] = await connectedClients(2, { sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const first = await acquire(client!, path);
    await first.release();
    // A release's delete finishes in the background: each window ends once the node is gone.
    await untilEmpty(observer!, path);
    const perRound: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = await requestsMade(connectString, client!.sessionId as string);
      for (let i = 0; i < 20; i++) {
        const lease = await acquire(client!, path);
        expect(lease.isHeld).toBe(true);
        await lease.release();
      }
      await untilEmpty(observer!, path);
      perRound.push(
        ((await requestsMade(connectString, client!.sessionId as string)) - before) / 20,
      );
    }
    // The create (with the listing pipelined behind it: one round trip), the watch on our own
    // node (how a deleted node is noticed), the delete: four requests, whose replies and that
    // watch's notification of the delete make five packets. No shortcut skips the listing:
    // what a client knew of a path does not survive the path being reaped and made again
    // (container-reaped tests). Counted per session from the server's `cons`: a packet count
    // would include pings, which land in a window on a slow machine.
    expect(perRound).toEqual([4, 4, 4]);
  });
});
