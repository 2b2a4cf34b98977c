/**
 * zkrx's mutex on one path with Curator's InterProcessMutex (Java) and kazoo's Lock (Python):
 * each side excludes the other, hand-offs between them never overlap, and all agree on the order.
 */
import type { ZkClient } from '@zkrx/core';
import { acquire, LockTimeoutError, tryAcquire } from '@zkrx/lock';
import { sortChildren } from '@zkrx/lock/recipe';
import { testZooKeeper } from '@zkrx/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { HoldLog } from '../test/holds';
import { isAlive } from '../test/processes';
import {
  baseName,
  childrenOf,
  ephemeralsUnder,
  interopRoot,
  openClient,
  removeTree,
  sequence,
  sleep,
  track,
  untilEmpty,
} from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { Peer, PeerAcquireOptions } from './peer';
import { startPeer } from './peer';

const availability = peerAvailability();
const skipNote = (kind: 'curator' | 'kazoo') => {
  const support = availability[kind];
  return support.available ? '' : ` (skipped: ${support.reason})`;
};

/** Curator's protected mutex node name; zkrx creates the very same shape. */
const CURATOR_MUTEX_NODE =
  /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/;
/** kazoo's Lock node name. */
const KAZOO_LOCK_NODE = /^[0-9a-f]{32}__lock__\d{10}$/;

/** Someone who can take the lock at a path: a zkrx client or a peer's session. */
interface Contender {
  readonly name: string;
  take(path: string, timeoutMs: number): Promise<{ node: string; release(): Promise<void> }>;
}

function zkrxContender(name: string, client: ZkClient): Contender {
  return {
    name,
    async take(path, timeoutMs) {
      const lease = await acquire(client, path, { timeoutMs, data: name });
      return { node: lease.node, release: () => lease.release() };
    },
  };
}

function peerContender(name: string, peer: Peer, options: PeerAcquireOptions = {}): Contender {
  return {
    name,
    async take(path, timeoutMs) {
      const hold = await peer.acquire('mutex', path, {
        timeoutMs,
        participantId: name,
        ...options,
      });
      return { node: hold.node as string, release: () => peer.release(hold.id) };
    },
  };
}

interface SuiteContext {
  readonly peers: Peer[];
  readonly zkrx: ZkClient;
  readonly path: string;
}

/** The shared cases, run against Curator and kazoo; returns its peers and client for more. */
function mutexInteropSuite(
  kind: 'curator' | 'kazoo',
  peerOptions: PeerAcquireOptions,
  peerNodePattern: RegExp,
): SuiteContext {
  let peers: Peer[] = [];
  let zkrxA: ZkClient;
  let zkrxB: ZkClient;
  let root: string;
  let path: string;

  beforeAll(async () => {
    const { connectString } = await testZooKeeper();
    [zkrxA, zkrxB, ...peers] = await Promise.all([
      openClient(),
      openClient(),
      startPeer(kind, { connectString }),
      startPeer(kind, { connectString }),
    ]);
  });

  afterAll(async () => {
    await Promise.all(peers.map((peer) => peer.close()));
    for (const peer of peers)
      expect(isAlive(peer.pid), `${kind} peer ${peer.pid} is gone`).toBe(false);
    await Promise.all([zkrxA?.close(), zkrxB?.close()]);
  });

  beforeEach(() => {
    root = interopRoot();
    path = `${root}/lock`;
  });

  afterEach(async () => {
    // Nothing either side created may survive: no queue entry, then no node at all.
    expect(await ephemeralsUnder(zkrxA, root)).toEqual([]);
    await removeTree(zkrxA, root);
    expect(await zkrxA.promises.exists(root)).toBeNull();
  });

  const peerA = () => peers[0] as Peer;
  const peerB = () => peers[1] as Peer;

  it(`a zkrx holder blocks ${kind}: its acquire times out while held and succeeds only after the release`, async () => {
    const lease = await acquire(zkrxA, path);

    const started = performance.now();
    await expect(
      peerA().acquire('mutex', path, { ...peerOptions, timeoutMs: 600 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    // The timed-out waiter took its node with it.
    expect(await childrenOf(zkrxA, path)).toEqual([baseName(lease.node)]);

    const waiting = track(peerA().acquire('mutex', path, peerOptions));
    await vi.waitUntil(async () => (await childrenOf(zkrxA, path)).length === 2);
    await sleep(300);
    expect(waiting.settled(), `${kind} acquired while zkrx held`).toBe(false);

    const releasedAt = performance.now();
    await lease.release();
    const hold = await waiting.promise;
    expect(waiting.settledAt()).toBeGreaterThan(releasedAt);
    expect(baseName(hold.node as string)).toMatch(peerNodePattern);
    // Now zkrx is the one kept out.
    expect(await tryAcquire(zkrxB, path)).toBeNull();
    await peerA().release(hold.id);
    expect(await childrenOf(zkrxA, path)).toEqual([]);
  });

  it(`a ${kind} holder blocks zkrx: acquire times out while held and succeeds only after the release`, async () => {
    const hold = await peerA().acquire('mutex', path, peerOptions);

    await expect(acquire(zkrxA, path, { timeoutMs: 600 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await tryAcquire(zkrxA, path)).toBeNull();
    expect(await childrenOf(zkrxA, path)).toEqual([baseName(hold.node as string)]);

    const waiting = track(acquire(zkrxB, path));
    await vi.waitUntil(async () => (await childrenOf(zkrxA, path)).length === 2);
    await sleep(300);
    expect(waiting.settled(), `zkrx acquired while ${kind} held`).toBe(false);

    const releasedAt = performance.now();
    await peerA().release(hold.id);
    const lease = await waiting.promise;
    expect(waiting.settledAt()).toBeGreaterThan(releasedAt);
    await expect(
      peerB().acquire('mutex', path, { ...peerOptions, timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    await lease.release();
    await untilEmpty(zkrxA, path);
  });

  it(`2 zkrx clients and 2 ${kind} peers take turns 40 times, never overlapping, always the lowest sequence`, async () => {
    const contenders = [
      zkrxContender('zkrx-a', zkrxA),
      zkrxContender('zkrx-b', zkrxB),
      peerContender(`${kind}-a`, peerA(), peerOptions),
      peerContender(`${kind}-b`, peerB(), peerOptions),
    ];
    const rounds = 10;
    const log = new HoldLog();
    await Promise.all(
      contenders.map(async (contender) => {
        for (let round = 0; round < rounds; round++) {
          const held = await contender.take(path, 20_000);
          const record = log.enter(contender.name, held.node);
          // Whoever holds must own the lowest sequence queued (everyone orders by it).
          const queued = await zkrxA.promises.children(path);
          const lowest = [...queued].sort((a, b) => sequence(a) - sequence(b))[0];
          if (lowest !== baseName(held.node)) {
            log.violations.push(`${contender.name} held ${held.node} while ${lowest} was first`);
          }
          await sleep(3);
          log.exit(record);
          await held.release();
        }
      }),
    );
    expect(log.violations).toEqual([]);
    expect(log.overlaps()).toEqual([]);
    expect(log.holds).toHaveLength(contenders.length * rounds);
    // The lock really went back and forth between the implementations.
    expect(log.switches()).toBeGreaterThanOrEqual(rounds);
    // zkrx-b's last release finishes in the background: zkrx-a's listing may come first.
    await untilEmpty(zkrxA, path);
  });

  it(`${kind}'s and zkrx's nodes sort in one sequence, and the lock is handed on in that order`, async () => {
    const joined: { who: string; name: string }[] = [];
    const join = async <T>(who: string, start: () => Promise<T>) => {
      const before = new Set(await childrenOf(zkrxA, path));
      const pending = track(start());
      let added: string[] = [];
      await vi.waitUntil(async () => {
        added = (await childrenOf(zkrxA, path)).filter((name) => !before.has(name));
        return added.length === 1;
      });
      joined.push({ who, name: added[0] as string });
      return pending;
    };
    const first = await join('zkrx-a', () => acquire(zkrxA, path, { data: 'zkrx-a' }));
    const second = await join(`${kind}-a`, () =>
      peerA().acquire('mutex', path, { ...peerOptions, participantId: `${kind}-a` }),
    );
    const third = await join('zkrx-b', () => acquire(zkrxB, path, { data: 'zkrx-b' }));
    const fourth = await join(`${kind}-b`, () =>
      peerB().acquire('mutex', path, { ...peerOptions, participantId: `${kind}-b` }),
    );

    const names = joined.map((entry) => entry.name);
    expect(names[0]).toMatch(CURATOR_MUTEX_NODE);
    expect(names[1]).toMatch(peerNodePattern);
    expect(names[2]).toMatch(CURATOR_MUTEX_NODE);
    expect(names[3]).toMatch(peerNodePattern);
    const sequences = names.map(sequence);
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    // zkrx's order is the joining order...
    expect(sortChildren(await childrenOf(zkrxA, path)).map((child) => child.name)).toEqual(names);
    // ...and so is the peer's own.
    const seen = await peerA().participants('mutex', path, peerOptions);
    if (kind === 'curator') expect(seen.nodes).toEqual(names);
    else expect(seen.contenders).toEqual(joined.map((entry) => entry.who));

    // Hand-offs follow that order: each release lets in exactly the next one.
    const lease = await first.promise;
    await sleep(200);
    expect([second.settled(), third.settled(), fourth.settled()]).toEqual([false, false, false]);
    await lease.release();
    const secondHold = await second.promise;
    await sleep(200);
    expect([third.settled(), fourth.settled()]).toEqual([false, false]);
    await peerA().release(secondHold.id);
    const thirdLease = await third.promise;
    await sleep(200);
    expect(fourth.settled()).toBe(false);
    await thirdLease.release();
    const fourthHold = await fourth.promise;
    expect(fourthHold.node).toBe(`${path}/${names[3]}`);
    await peerB().release(fourthHold.id);
    expect(await childrenOf(zkrxA, path)).toEqual([]);
  });

  return {
    get peers() {
      return peers;
    },
    get zkrx() {
      return zkrxA;
    },
    get path() {
      return path;
    },
  };
}

describe.skipIf(!availability.curator.available)(
  `Curator InterProcessMutex and zkrx mutex on one path${skipNote('curator')}`,
  () => {
    mutexInteropSuite('curator', {}, CURATOR_MUTEX_NODE);
  },
);

describe.skipIf(!availability.kazoo.available)(
  `kazoo Lock (extra_lock_patterns=["-lock-"]) and zkrx mutex on one path${skipNote('kazoo')}`,
  () => {
    const suite = mutexInteropSuite('kazoo', { extraLockPatterns: ['-lock-'] }, KAZOO_LOCK_NODE);

    it('control: a plain kazoo Lock (no extra_lock_patterns) ignores zkrx nodes and overlaps', async () => {
      // Why the pattern is required, and proof that these tests see an overlap when there is one.
      const { zkrx, path } = suite;
      const kazoo = suite.peers[0] as Peer;
      const lease = await acquire(zkrx, path);
      const hold = await kazoo.acquire('mutex', path, { extraLockPatterns: [], timeoutMs: 20_000 });
      expect(lease.isHeld).toBe(true);
      expect(await kazoo.isHeld(hold.id)).toBe(true);
      await kazoo.release(hold.id);
      await lease.release();
    });
  },
);

describe.skipIf(!availability.curator.available || !availability.kazoo.available)(
  `Curator and kazoo on one path: not safe, with or without zkrx${skipNote('curator')}${skipNote('kazoo')}`,
  () => {
    let curator: Peer;
    let kazoo: Peer;
    let observer: ZkClient;
    let root: string;

    beforeAll(async () => {
      const { connectString } = await testZooKeeper();
      [curator, kazoo, observer] = await Promise.all([
        startPeer('curator', { connectString }),
        startPeer('kazoo', { connectString }),
        openClient(),
      ]);
    });

    afterAll(async () => {
      await Promise.all([curator?.close(), kazoo?.close()]);
      await observer?.close();
    });

    beforeEach(() => {
      root = interopRoot();
    });

    afterEach(async () => {
      expect(await ephemeralsUnder(observer, root)).toEqual([]);
      await removeTree(observer, root);
      expect(await observer.promises.exists(root)).toBeNull();
    });

    it('Curator orders a kazoo node by its whole name, so it takes the lock while kazoo holds', async () => {
      // kazoo (with "-lock-") waits for Curator, but Curator's key for "<hex>__lock__<seq>" is the
      // whole name (no "lock-" in it), which sorts after "<seq>" unless the hex starts with "0".
      const path = `${root}/lock`;
      let kazooHold = await kazoo.acquire('mutex', path, { extraLockPatterns: ['-lock-'] });
      while (baseName(kazooHold.node as string).startsWith('0')) {
        await kazoo.release(kazooHold.id); // the 1-in-16 name that Curator would sort first
        kazooHold = await kazoo.acquire('mutex', path, { extraLockPatterns: ['-lock-'] });
      }
      const curatorHold = await curator.acquire('mutex', path, { timeoutMs: 20_000 });
      expect(await kazoo.isHeld(kazooHold.id)).toBe(true);
      expect(await curator.isHeld(curatorHold.id)).toBe(true);
      // zkrx, ordering by sequence, agrees with kazoo: it is kept out by both.
      const zkrx = await tryAcquire(observer, path);
      expect(zkrx).toBeNull();
      await curator.release(curatorHold.id);
      await kazoo.release(kazooHold.id);
    });
  },
);
