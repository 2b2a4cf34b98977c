/**
 * The lock path is a container: ZooKeeper deletes it once idle, and a new one made later numbers
 * its children from 0 again. What a client learnt of the old path must not make it hold the new.
 */
import type { ZkClient } from '@zkrx/core';
import type { Lease } from '@zkrx/lock';
import {
  lockPath,
  reapingClients,
  reapingZooKeeper,
  untilGone,
  untilWatching,
} from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { acquireRead, acquireWrite, tryAcquireRead, tryAcquireWrite } from './index';

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; readonly settled: boolean } {
  const state = { promise, settled: false };
  const settle = () => {
    state.settled = true;
  };
  promise.then(settle, settle);
  return state;
}

type Side = 'read' | 'write';
const take = (side: Side, client: ZkClient, path: string): Promise<Lease> =>
  side === 'read' ? acquireRead(client, path) : acquireWrite(client, path);

/** `a` takes `side` alone and lets it go; then ZooKeeper reaps the idle path. */
async function heldAloneThenReaped(side: Side, a: ZkClient, path: string): Promise<void> {
  const lease = await take(side, a, path);
  await lease.release();
  await untilGone(a, path);
}

describe('an idle read-write lock path reaped between two uses, then a writer first', () => {
  it.each(['read', 'write'] as const)(
    'try-%s by the earlier holder finds the write lock taken',
    async (side) => {
      const [a, b] = await reapingClients(2);
      const path = lockPath('rw');
      await heldAloneThenReaped(side, a!, path);
      const writer = await acquireWrite(b!, path);
      expect(writer.node).toMatch(/__WRIT__0000000000$/);
      const attempt = side === 'read' ? tryAcquireRead(a!, path) : tryAcquireWrite(a!, path);
      expect(await attempt).toBeNull();
      expect(writer.isHeld).toBe(true);
      await writer.release();
    },
  );

  it.each(['read', 'write'] as const)(
    '%s by the earlier holder waits for the writer',
    async (side) => {
      const server = await reapingZooKeeper();
      const [a, b] = await reapingClients(2);
      const path = lockPath('rw');
      await heldAloneThenReaped(side, a!, path);
      const writer = await acquireWrite(b!, path);
      const waiting = tracked(take(side, a!, path));
      await untilWatching(server, a!, writer.node, waiting.promise);
      expect(waiting.settled).toBe(false);
      await writer.release();
      const lease = await waiting.promise;
      expect(lease.isHeld).toBe(true);
      await lease.release();
    },
  );
});
