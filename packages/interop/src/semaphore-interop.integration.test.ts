/**
 * zkrx's counting semaphore on one path with Curator's InterProcessSemaphoreV2 (Java): leases
 * are counted across both libraries, both get leases, and zkrx leaves nothing behind.
 */
import type { ZkClient } from '@zkrx/core';
import { acquireSemaphore, LockTimeoutError } from '@zkrx/lock';
import { testZooKeeper } from '@zkrx/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HoldLog } from '../test/holds';
import { isAlive } from '../test/processes';
import {
  baseName,
  childrenOf,
  ephemeralsUnder,
  interopRoot,
  openClient,
  removeTree,
  sleep,
  track,
} from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { Peer } from './peer';
import { startPeer } from './peer';

const { curator } = peerAvailability();

const LEASES = 3;
/** A lease node, Curator's or zkrx's (the same shape). */
const LEASE_NODE = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lease-\d{10}$/;

describe.skipIf(!curator.available)(
  `Curator InterProcessSemaphoreV2 and zkrx semaphore on one path${curator.available ? '' : ` (skipped: ${curator.reason})`}`,
  () => {
    let peer: Peer;
    let clients: ZkClient[] = [];
    let root: string;
    let path: string;

    beforeAll(async () => {
      const { connectString } = await testZooKeeper();
      const started = startPeer('curator', { connectString });
      clients = await Promise.all([openClient(), openClient(), openClient(), openClient()]);
      peer = await started;
    });

    afterAll(async () => {
      await peer?.close();
      if (peer) expect(isAlive(peer.pid), `curator peer ${peer.pid} is gone`).toBe(false);
      await Promise.all(clients.map((client) => client.close()));
    });

    beforeEach(() => {
      root = interopRoot();
      path = `${root}/semaphore`;
    });

    afterEach(async () => {
      expect(await ephemeralsUnder(observer(), root)).toEqual([]);
      await removeTree(observer(), root);
      expect(await observer().promises.exists(root)).toBeNull();
    });

    const observer = () => clients[3] as ZkClient;
    const leasesOf = () => childrenOf(observer(), `${path}/leases`);
    const locksOf = () => childrenOf(observer(), `${path}/locks`);
    /** zkrx removes its `locks` node in the background once it holds (or gives up). */
    const expectNoNodesLeft = async () => {
      await expect.poll(locksOf).toEqual([]);
      await expect.poll(leasesOf).toEqual([]);
    };

    it(`${LEASES} leases held by both libraries keep a fourth taker of either out until one is returned, from either side`, async () => {
      const [a, b, c] = clients as [ZkClient, ZkClient, ZkClient];
      const zkrxFirst = await acquireSemaphore(a, path, { leases: LEASES, timeoutMs: 20_000 });
      const curatorFirst = await peer.acquire('semaphore', path, {
        leases: LEASES,
        timeoutMs: 20_000,
      });
      const zkrxSecond = await acquireSemaphore(b, path, { leases: LEASES, timeoutMs: 20_000 });
      const held = await leasesOf();
      expect(held.sort()).toEqual(
        [zkrxFirst.node, curatorFirst.node as string, zkrxSecond.node].map(baseName).sort(),
      );
      for (const name of held) expect(name).toMatch(LEASE_NODE);

      // Full: a fourth taker of either library times out, leaving no node.
      await expect(
        peer.acquire('semaphore', path, { leases: LEASES, timeoutMs: 500 }),
      ).rejects.toMatchObject({ code: 'timeout' });
      await expect(
        acquireSemaphore(c, path, { leases: LEASES, timeoutMs: 500 }),
      ).rejects.toBeInstanceOf(LockTimeoutError);
      await expect.poll(locksOf, { timeout: 15_000 }).toEqual([]);
      expect(await leasesOf()).toHaveLength(LEASES);

      // A waiting Curator taker gets the lease zkrx returns...
      const curatorWaiting = track(peer.acquire('semaphore', path, { leases: LEASES }));
      await sleep(250);
      expect(curatorWaiting.settled(), 'Curator took a fourth lease').toBe(false);
      const zkrxReleasedAt = performance.now();
      await zkrxFirst.release();
      const curatorSecond = await curatorWaiting.promise;
      expect(curatorWaiting.settledAt()).toBeGreaterThan(zkrxReleasedAt);

      // ...and a waiting zkrx taker the lease Curator returns.
      const zkrxWaiting = track(acquireSemaphore(c, path, { leases: LEASES }));
      await sleep(250);
      expect(zkrxWaiting.settled(), 'zkrx took a fourth lease').toBe(false);
      const curatorReleasedAt = performance.now();
      await peer.release(curatorFirst.id);
      const zkrxThird = await zkrxWaiting.promise;
      expect(zkrxWaiting.settledAt()).toBeGreaterThan(curatorReleasedAt);
      expect(await leasesOf()).toHaveLength(LEASES);

      await zkrxSecond.release();
      await zkrxThird.release();
      await peer.release(curatorSecond.id);
      await expectNoNodesLeft();
    });

    it(`3 zkrx clients and 3 Curator sessions take 36 leases: never more than ${LEASES} holders, and both libraries hold`, async () => {
      const [a, b, c] = clients as [ZkClient, ZkClient, ZkClient];
      const log = new HoldLog(LEASES);
      const rounds = 6;
      const zkrx = (name: string, client: ZkClient) => async () => {
        const lease = await acquireSemaphore(client, path, {
          leases: LEASES,
          timeoutMs: 20_000,
          data: name,
        });
        return { node: lease.node, release: () => lease.release() };
      };
      const java = (session: string) => async () => {
        const hold = await peer.acquire('semaphore', path, {
          leases: LEASES,
          timeoutMs: 20_000,
          session,
        });
        return { node: hold.node as string, release: () => peer.release(hold.id) };
      };
      const takers = [
        { name: 'zkrx-a', take: zkrx('zkrx-a', a) },
        { name: 'zkrx-b', take: zkrx('zkrx-b', b) },
        { name: 'zkrx-c', take: zkrx('zkrx-c', c) },
        { name: 'curator-a', take: java('a') },
        { name: 'curator-b', take: java('b') },
        { name: 'curator-c', take: java('c') },
      ];
      // In its first round, zkrx-a stays until curator-a holds too and the other way round: the
      // libraries share the leases whatever the pace (the other takers come and go meanwhile).
      const pair = new Set<string>();
      let pairIn: () => void = () => {};
      const bothIn = new Promise<void>((resolve) => {
        pairIn = resolve;
      });
      await Promise.all(
        takers.map(async (taker) => {
          for (let round = 0; round < rounds; round++) {
            const held = await taker.take();
            const record = log.enter(taker.name, held.node);
            if (round === 0 && (taker.name === 'zkrx-a' || taker.name === 'curator-a')) {
              pair.add(taker.name);
              if (pair.size === 2) pairIn();
              await bothIn;
            }
            await sleep(20);
            log.exit(record);
            await held.release();
          }
        }),
      );
      expect(log.violations).toEqual([]);
      expect(log.maxConcurrent()).toBeLessThanOrEqual(LEASES);
      expect(log.holds).toHaveLength(takers.length * rounds);
      // The leases were really shared: several at once, across the libraries.
      expect(log.maxConcurrent()).toBeGreaterThanOrEqual(2);
      const shared = log.holds.some((zkrxHold) =>
        log.holds.some(
          (curatorHold) =>
            zkrxHold.who.startsWith('zkrx') &&
            curatorHold.who.startsWith('curator') &&
            zkrxHold.start < curatorHold.end &&
            curatorHold.start < zkrxHold.end,
        ),
      );
      expect(shared, 'no zkrx lease was ever held beside a Curator lease').toBe(true);
      const byLibrary = (library: string) =>
        log.holds.filter((hold) => hold.who.startsWith(library)).length;
      expect([byLibrary('zkrx'), byLibrary('curator')]).toEqual([18, 18]);
      expect(log.switches()).toBeGreaterThanOrEqual(rounds);
      await expectNoNodesLeft();
    });
  },
);
