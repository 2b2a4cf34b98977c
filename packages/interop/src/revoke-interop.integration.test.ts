/**
 * Revocation between zkrx and Curator, both ways: zkrx's `requestRevoke` reaches a Curator lock
 * made revocable (`makeRevocable`), and Curator's `Revoker.attemptRevoke` reaches a zkrx lease
 * taken with `revocable: true`. Neither side releases on its own: the holder decides.
 */
import type { ZkClient } from '@zkrx/core';
import { acquire, LockRevokedError, requestRevoke, tryAcquire } from '@zkrx/lock';
import { acquireWrite, tryAcquireWrite } from '@zkrx/rwlock';
import { testZooKeeper } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from '../test/processes';
import { ephemeralsUnder, interopRoot, openClient, removeTree } from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { Peer, PeerEvent, PeerRecipe } from './peer';
import { startPeer } from './peer';

const curator = peerAvailability().curator;

describe.skipIf(!curator.available)(
  `revocation with Curator${curator.available ? '' : ` (skipped: ${curator.reason})`}`,
  () => {
    let peer: Peer;
    let client: ZkClient;
    let root: string;

    beforeAll(async () => {
      const { connectString } = await testZooKeeper();
      [client, peer] = await Promise.all([openClient(), startPeer('curator', { connectString })]);
    });

    afterAll(async () => {
      await peer?.close();
      if (peer) expect(isAlive(peer.pid), 'the Curator peer is gone').toBe(false);
      await client?.close();
    });

    beforeEach(() => {
      root = interopRoot();
    });

    afterEach(async () => {
      expect(await ephemeralsUnder(client, root)).toEqual([]);
      await removeTree(client, root);
    });

    /** Resolves the peer's `revoked` event for `handle`. */
    function revokedEvent(handle: string): Promise<PeerEvent> {
      return new Promise((resolve) => {
        const stop = peer.onEvent((event) => {
          if (event.event === 'revoked' && event.handle === handle) {
            stop();
            resolve(event);
          }
        });
      });
    }

    it.each(['mutex', 'write'] as const)(
      "zkrx's requestRevoke reaches a revocable Curator %s, which decides when to release",
      async (recipe: PeerRecipe) => {
        const path = `${root}/lock`;
        const hold = await peer.acquire(recipe, path, { revocable: true });
        const told = revokedEvent(hold.id);
        expect(await requestRevoke(client, hold.node as string)).toBe(true);
        expect(await told).toMatchObject({ event: 'revoked', handle: hold.id });
        // Still held until Curator's holder lets go.
        expect(await peer.isHeld(hold.id)).toBe(true);
        const take = () =>
          recipe === 'mutex' ? tryAcquire(client, path) : tryAcquireWrite(client, path);
        expect(await take()).toBeNull();
        await peer.release(hold.id);
        const lease =
          recipe === 'mutex'
            ? await acquire(client, path, { timeoutMs: 10_000 })
            : await acquireWrite(client, path, { timeoutMs: 10_000 });
        await lease.release();
      },
    );

    it("Curator's Revoker reaches a revocable zkrx lease", async () => {
      const path = `${root}/lock`;
      const lease = await acquire(client, path, { revocable: true });
      const revoked = firstValueFrom(lease.revoked$);
      await peer.revoke(lease.node);
      expect(await revoked).toBeInstanceOf(LockRevokedError);
      expect(lease.signal.reason).toBeInstanceOf(LockRevokedError);
      expect(lease.isHeld).toBe(true);
      await lease.release();
    });
  },
);
