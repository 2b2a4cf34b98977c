import type { ZkClient } from '@zkrx/core';
import { connectedClients, lockPath, untilEmpty, untilWatching } from '@zkrx/test-support';
import { fourLetterWord, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { acquire, type Lease, mutex } from './index';

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

/** Acquire+release `rounds` times in each of three windows: the requests per round in each. */
async function requestsPerRound(
  connectString: string,
  client: ZkClient,
  observer: ZkClient,
  path: string,
  round: () => Promise<void>,
): Promise<number[]> {
  await round();
  // A release's delete finishes in the background: each window ends once the node is gone.
  await untilEmpty(observer, path);
  const perRound: number[] = [];
  for (let window = 0; window < 3; window++) {
    const before = await requestsMade(connectString, client.sessionId as string);
    for (let i = 0; i < 20; i++) await round();
    await untilEmpty(observer, path);
    perRound.push(((await requestsMade(connectString, client.sessionId as string)) - before) / 20);
  }
  return perRound;
}

describe('what an uncontended lock costs the server', () => {
  it("three packets per acquire+release nobody listens to, Curator's count, the first time as the hundredth", async () => {
    const { connectString } = await testZooKeeper();
    const [client, observer] = await connectedClients(2, { sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const perRound = await requestsPerRound(connectString, client!, observer!, path, async () => {
      const lease = await acquire(client!, path);
      expect(lease.isHeld).toBe(true);
      await lease.release();
    });
    // The create (with the listing pipelined behind it: one round trip) and the delete: three
    // requests, three replies. No shortcut skips the listing: what a client knew of a path does
    // not survive the path being reaped and made again (container-reaped tests). Nobody asked to
    // hear of the node's deletion, so it is not watched. Counted per session from the server's
    // `cons`: a packet count would include pings, which land in a window on a slow machine.
    expect(perRound).toEqual([3, 3, 3]);
  });

  it('one request more (and its notification) for a lease whose end is listened to', async () => {
    const { connectString } = await testZooKeeper();
    const [client, observer] = await connectedClients(2, { sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const perRound = await requestsPerRound(connectString, client!, observer!, path, async () => {
      const lease = await acquire(client!, path);
      expect(lease.signal.aborted).toBe(false);
      await lease.release();
    });
    // Asking for `signal` watches the node (a getData with a watch), so that its deletion by
    // someone else ends the lease at once; the watch's notification, when the release deletes
    // the node, is the fifth packet.
    expect(perRound).toEqual([4, 4, 4]);
  });
});

describe('what a hand-off costs the next waiter', () => {
  it.each([
    ['that watches its own node trusts it: no request', true, 0],
    ['that does not lists the children again: one request', false, 1],
  ] as const)('a waiter %s', async (_, observed, requests) => {
    const server = await testZooKeeper();
    const [holder, waiter] = await connectedClients(2, { sessionTimeoutMs: 10_000 });
    const path = lockPath();
    const held = await acquire(holder!, path);
    const waiting = observed
      ? new Promise<Lease>((resolve, reject) => {
          mutex(waiter!, path).subscribe({ next: resolve, error: reject });
        })
      : acquire(waiter!, path);
    await untilWatching(server, waiter!, held.node);
    const before = await requestsMade(server.connectString, waiter!.sessionId as string);
    await held.release();
    const lease = await waiting;
    const after = await requestsMade(server.connectString, waiter!.sessionId as string);
    expect(after - before).toBe(requests);
    await lease.release();
    await untilEmpty(holder!, path);
  });
});
