/**
 * `inspect` / `inspectTree` of @zkrx/lock on nodes written by Curator (Java) and kazoo (Python):
 * each library's locks, read-write locks, semaphores and elections, with zkrx's beside them on
 * the same paths; the holders and waiters each library's own rule decides, and what each
 * library writes into its nodes.
 */
import type { ZkClient } from '@zkrx/core';
import { joinElection } from '@zkrx/leader';
import { acquire, acquireSemaphore, type InspectedLock, inspect, inspectTree } from '@zkrx/lock';
import { acquireRead } from '@zkrx/rwlock';
import { testZooKeeper } from '@zkrx/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from '../test/processes';
import { ephemeralsUnder, interopRoot, openClient, removeTree } from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { Peer, PeerHold } from './peer';
import { startPeer } from './peer';

const availability = peerAvailability();
const IP_ADDRESS = /^(\d{1,3}\.){3}\d{1,3}$|:/;

/** Resolves the lock at `path` once `ready` says it is as expected (the peers act on their own threads). */
async function inspectUntil(
  client: ZkClient,
  path: string,
  ready: (lock: InspectedLock) => boolean,
): Promise<InspectedLock> {
  let last: InspectedLock | null = null;
  await expect
    .poll(
      async () => {
        last = await inspect(client, path);
        return last !== null && ready(last);
      },
      { timeout: 15_000, interval: 50 },
    )
    .toBe(true);
  return last as unknown as InspectedLock;
}

const sessionsOf = (lock: InspectedLock) => ({
  holders: lock.holders.map((participant) => participant.sessionId),
  waiters: lock.waiters.map((participant) => participant.sessionId),
});

for (const kind of ['curator', 'kazoo'] as const) {
  const peerAvailable = availability[kind];
  describe.skipIf(!peerAvailable.available)(
    `inspect on ${kind}'s nodes${peerAvailable.available ? '' : ` (skipped: ${peerAvailable.reason})`}`,
    () => {
      let peer: Peer;
      let client: ZkClient;
      let root: string;
      let peerSession: string;
      let otherSession: string;
      const holds: PeerHold[] = [];
      const waiting: AbortController[] = [];

      beforeAll(async () => {
        const { connectString } = await testZooKeeper();
        const started = startPeer(kind, { connectString });
        client = await openClient();
        peer = await started;
        peerSession = (await peer.sessionCredentials()).sessionId;
        otherSession = (await peer.sessionCredentials('other')).sessionId;
      });

      afterAll(async () => {
        await peer?.close();
        if (peer) expect(isAlive(peer.pid)).toBe(false);
        await client?.close();
      });

      beforeEach(() => {
        root = interopRoot();
      });

      afterEach(async () => {
        for (const controller of waiting.splice(0)) controller.abort();
        for (const hold of holds.splice(0)) await peer.release(hold.id).catch(() => {});
        await expect.poll(() => ephemeralsUnder(client, root), { timeout: 5_000 }).toEqual([]);
        await removeTree(client, root);
      });

      /** Starts a peer acquire that waits (cancelled after the test). */
      const waitInPeer = (
        recipe: Parameters<Peer['acquire']>[0],
        path: string,
        options: NonNullable<Parameters<Peer['acquire']>[2]>,
      ) => {
        const controller = new AbortController();
        waiting.push(controller);
        peer.acquire(recipe, path, { ...options, signal: controller.signal }).then(
          (hold) => holds.push(hold),
          () => {},
        );
      };

      it('a mutex: the peer holds, zkrx and the peer wait, in queue order', async () => {
        const path = `${root}/mutex`;
        const hold = await peer.acquire('mutex', path, { participantId: 'py-holder' });
        holds.push(hold);
        const controller = new AbortController();
        const zkrxWaiting = acquire(client, path, { signal: controller.signal }).catch(() => {});
        await inspectUntil(client, path, (lock) => lock.waiters.length === 1);
        waitInPeer('mutex', path, { session: 'other', participantId: 'py-waiter' });
        const lock = await inspectUntil(client, path, (found) => found.waiters.length === 2);
        expect(lock).toMatchObject({
          kind: 'mutex',
          layout: kind === 'curator' ? 'curator' : 'mixed',
        });
        expect(lock.holders[0]?.node).toBe(hold.node);
        expect(sessionsOf(lock)).toEqual({
          holders: [peerSession],
          waiters: [client.sessionId, otherSession],
        });
        expect(lock.holders[0]).toMatchObject({ layout: kind, ownSession: false });
        expect(lock.waiters[0]).toMatchObject({ layout: 'curator', ownSession: true });
        if (kind === 'curator') {
          // Curator's default node data: the client's local address, as text.
          expect(lock.holders[0]?.data).toMatch(IP_ADDRESS);
        } else {
          // kazoo: the Lock's identifier.
          expect(lock.holders[0]?.data).toBe('py-holder');
          expect(lock.waiters[1]?.data).toBe('py-waiter');
        }
        controller.abort();
        await zkrxWaiting;
      });

      it('a read-write lock: readers of both libraries hold, the writer and later readers wait', async () => {
        const path = `${root}/rw`;
        const reader = await peer.acquire('read', path, { participantId: 'reader' });
        holds.push(reader);
        const zkrxReader = await acquireRead(client, path);
        waitInPeer('write', path, { session: 'other', participantId: 'writer' });
        const lock = await inspectUntil(client, path, (found) => found.waiters.length === 1);
        expect(lock.kind).toBe('read-write');
        expect(lock.holders.map((p) => [p.node, p.mode])).toEqual([
          [reader.node, 'read'],
          [zkrxReader.node, 'read'],
        ]);
        expect(lock.waiters.map((p) => [p.sessionId, p.mode])).toEqual([[otherSession, 'write']]);
        await zkrxReader.release();
      });

      it('a semaphore: the leases hold, a third taker waits', async () => {
        const path = `${root}/semaphore`;
        const first = await peer.acquire('semaphore', path, {
          leases: 2,
          participantId: 'lease-1',
        });
        holds.push(first);
        const second = await acquireSemaphore(
          client,
          kind === 'curator' ? path : `${root}/zkrx-semaphore`,
          { leases: 2 },
        );
        if (kind === 'kazoo') {
          // kazoo's semaphore layout is its own (zkrx shares Curator's): two peer holders.
          holds.push(
            await peer.acquire('semaphore', path, {
              leases: 2,
              session: 'other',
              participantId: 'lease-2',
            }),
          );
        }
        waitInPeer('semaphore', path, { leases: 2, session: 'third', participantId: 'taker' });
        const thirdSession = (await peer.sessionCredentials('third')).sessionId;
        // Curator's taker makes its lease node after taking `locks`; kazoo's only queues.
        const lock = await inspectUntil(
          client,
          path,
          (found) => found.waiters.length === (kind === 'curator' ? 2 : 1),
        );
        expect(lock.kind).toBe('semaphore');
        expect(lock.holders.map((p) => p.mode)).toEqual(['lease', 'lease']);
        expect(lock.waiters[0]?.sessionId).toBe(thirdSession);
        if (kind === 'curator') {
          expect(lock).toMatchObject({ layout: 'curator', maxLeases: undefined });
          expect(lock.holders.map((p) => p.node).sort()).toEqual([first.node, second.node].sort());
          // The Curator taker heads `locks` and has made its lease node: it waits for a lease.
          expect(lock.waiters.map((p) => p.mode)).toEqual(['exclusive', 'lease']);
        } else {
          expect(lock).toMatchObject({ layout: 'kazoo', maxLeases: 2 });
          expect(lock.holders.map((p) => [p.node, p.data])).toEqual([
            [first.node, 'lease-1'],
            [expect.stringMatching(/^\/.*\/[0-9a-f]{32}$/), 'lease-2'],
          ]);
          // The taker queues on the kazoo Lock `<path>-__lock__`, with its identifier made
          // from bytes by kazoo 2.8 (`str(b'taker')`).
          expect(lock.waiters[0]?.node).toMatch(/-__lock__\/[0-9a-f]{32}__lock__\d{10}$/);
          expect(lock.waiters[0]?.data).toBe("b'taker'");
          // Found by its lock path too, and once in a tree walk.
          expect((await inspect(client, `${path}-__lock__`))?.path).toBe(path);
          const tree = await inspectTree(client, root);
          expect(tree.map((found) => [found.path, found.kind])).toEqual([
            [path, 'semaphore'],
            [`${root}/zkrx-semaphore`, 'semaphore'],
          ]);
        }
        await second.release();
      });

      it.skipIf(kind !== 'curator')(
        'elections: a LeaderLatch and a LeaderSelector with their participant ids',
        async () => {
          const latchPath = `${root}/latch`;
          const selectorPath = `${root}/selector`;
          const latch = await peer.latchStart(latchPath, { participantId: 'java-1' });
          await peer.latchAwait(latch, 10_000);
          const election = joinElection(client, latchPath, { id: 'node-2' });
          await election.joined;
          const selector = await peer.acquire('selector', selectorPath, {
            participantId: 'java-selector',
          });
          holds.push(selector);
          const [latchLock, selectorLock] = await inspectTree(client, root);
          expect(latchLock).toMatchObject({ path: latchPath, kind: 'election', layout: 'curator' });
          expect(latchLock!.holders.map((p) => [p.data, p.mode])).toEqual([
            ['java-1', 'candidate'],
          ]);
          expect(latchLock!.waiters.map((p) => [p.data, p.ownSession])).toEqual([['node-2', true]]);
          // A LeaderSelector is a mutex on its path: its leader is the holder.
          expect(selectorLock).toMatchObject({ path: selectorPath, kind: 'mutex' });
          expect(selectorLock!.holders[0]?.data).toBe('java-selector');
          await election.leave();
          await peer.latchClose(latch);
        },
      );
    },
  );
}
