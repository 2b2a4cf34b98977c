/**
 * zkrx's read-write lock on one path with Curator's InterProcessReadWriteLock (Java) and kazoo's
 * ReadLock/WriteLock (Python): writers exclude everyone across libraries, readers share, one queue.
 */
import type { ZkClient } from '@zkrx/core';
import { sortChildren } from '@zkrx/lock/recipe';
import {
  acquireRead,
  acquireWrite,
  type Lease,
  LockTimeoutError,
  tryAcquireRead,
  tryAcquireWrite,
} from '@zkrx/rwlock';
import { testZooKeeper } from '@zkrx/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type HoldMode, ReadWriteLog } from '../test/holds';
import { isAlive } from '../test/processes';
import {
  baseName,
  childrenOf,
  ephemeralsUnder,
  interopRoot,
  openClient,
  removeTree,
  seededRandom,
  sequence,
  sleep,
  track,
  untilChildren,
  untilEmpty,
} from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { PeerKind } from './errors';
import type { Peer } from './peer';
import { startPeer } from './peer';

const availability = peerAvailability();
const skipNote = (kind: PeerKind) => {
  const support = availability[kind];
  return support.available ? '' : ` (skipped: ${support.reason})`;
};

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** The node names each library creates (zkrx creates Curator's). */
const NODE: Record<PeerKind, Record<HoldMode, RegExp>> = {
  curator: {
    read: new RegExp(`^_c_${UUID}-__READ__\\d{10}$`),
    write: new RegExp(`^_c_${UUID}-__WRIT__\\d{10}$`),
  },
  kazoo: { read: /^[0-9a-f]{32}__rlock__\d{10}$/, write: /^[0-9a-f]{32}__lock__\d{10}$/ },
};
/** A writer's node, of any of the three libraries. */
const WRITER_NODE = /(?:__WRIT__|__lock__)-?\d{10}$/;

/** Someone who can take the read or the write lock: a zkrx client or a peer's session. */
interface RwContender {
  readonly name: string;
  take(mode: HoldMode, path: string): Promise<{ node: string; release(): Promise<void> }>;
}

function zkrxContender(name: string, client: ZkClient): RwContender {
  return {
    name,
    async take(mode, path) {
      const take = mode === 'read' ? acquireRead : acquireWrite;
      const lease = await take(client, path, { timeoutMs: 20_000, data: name });
      return { node: lease.node, release: () => lease.release() };
    },
  };
}

function peerContender(name: string, peer: Peer, session: string): RwContender {
  return {
    name,
    async take(mode, path) {
      const hold = await peer.acquire(mode, path, {
        timeoutMs: 20_000,
        session,
        participantId: name,
      });
      return { node: hold.node as string, release: () => peer.release(hold.id) };
    },
  };
}

/** Half reads and half writes in a seeded random order (or only writes). */
function schedule(random: () => number, rounds: number, writesOnly: boolean): HoldMode[] {
  const modes: HoldMode[] = Array.from({ length: rounds }, (_, index) =>
    writesOnly || index % 2 === 1 ? 'write' : 'read',
  );
  for (let index = modes.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [modes[index], modes[other]] = [modes[other] as HoldMode, modes[index] as HoldMode];
  }
  return modes;
}

interface SuiteContext {
  readonly peer: Peer;
  readonly clients: readonly ZkClient[];
  readonly path: string;
}

/**
 * The cases shared by Curator and kazoo. None of them queues a writer behind a kazoo reader
 * that is still waiting (kazoo 2.8's issue #649, shown by its own test below).
 */
function readWriteInteropSuite(
  kind: PeerKind,
  loop: { seed: number; peerWritesOnly: boolean },
): SuiteContext {
  let peer: Peer;
  let clients: ZkClient[] = [];
  let root: string;
  let path: string;

  beforeAll(async () => {
    const { connectString } = await testZooKeeper();
    const started = startPeer(kind, { connectString });
    clients = await Promise.all([openClient(), openClient(), openClient()]);
    peer = await started;
  });

  afterAll(async () => {
    await peer?.close();
    if (peer) expect(isAlive(peer.pid), `${kind} peer ${peer.pid} is gone`).toBe(false);
    await Promise.all(clients.map((client) => client.close()));
  });

  beforeEach(() => {
    root = interopRoot();
    path = `${root}/rw`;
  });

  afterEach(async () => {
    const [observer] = clients as [ZkClient];
    expect(await ephemeralsUnder(observer, root)).toEqual([]);
    await removeTree(observer, root);
    expect(await observer.promises.exists(root)).toBeNull();
  });

  const zkrx = () => clients as [ZkClient, ZkClient, ZkClient];

  it(`a zkrx writer keeps out ${kind} readers and writers; they get in, in queue order, after its release`, async () => {
    const [a, b] = zkrx();
    const write = await acquireWrite(a, path, { data: 'zkrx-writer' });

    await expect(peer.acquire('read', path, { timeoutMs: 500 })).rejects.toMatchObject({
      code: 'timeout',
    });
    await expect(peer.acquire('write', path, { timeoutMs: 500 })).rejects.toMatchObject({
      code: 'timeout',
    });
    // The timed-out waiters took their nodes with them.
    expect(await childrenOf(a, path)).toEqual([baseName(write.node)]);

    // A writer, then a reader behind it (never a writer behind a waiting kazoo reader: #649).
    const peerWriter = track(peer.acquire('write', path, { participantId: `${kind}-writer` }));
    await untilChildren(a, path, 2);
    const peerReader = track(peer.acquire('read', path, { participantId: `${kind}-reader` }));
    await untilChildren(a, path, 3);
    await sleep(250);
    expect([peerWriter.settled(), peerReader.settled()], `${kind} got in while zkrx wrote`).toEqual(
      [false, false],
    );

    const releasedAt = performance.now();
    await write.release();
    const writerHold = await peerWriter.promise;
    expect(peerWriter.settledAt()).toBeGreaterThan(releasedAt);
    expect(baseName(writerHold.node as string)).toMatch(NODE[kind].write);
    // zkrx is kept out by the peer's writer now, and so is the peer's own reader.
    expect(await tryAcquireRead(b, path)).toBeNull();
    await sleep(150);
    expect(peerReader.settled(), `${kind} reader got in beside a writer`).toBe(false);

    const writerReleasedAt = performance.now();
    await peer.release(writerHold.id);
    const readerHold = await peerReader.promise;
    expect(peerReader.settledAt()).toBeGreaterThan(writerReleasedAt);
    expect(baseName(readerHold.node as string)).toMatch(NODE[kind].read);
    await peer.release(readerHold.id);
    expect(await childrenOf(a, path)).toEqual([]);
  });

  it(`a ${kind} writer keeps out zkrx readers and writers; they get in, in queue order, after its release`, async () => {
    const [a, b] = zkrx();
    const hold = await peer.acquire('write', path, { participantId: `${kind}-writer` });

    await expect(acquireRead(a, path, { timeoutMs: 500 })).rejects.toBeInstanceOf(LockTimeoutError);
    await expect(acquireWrite(a, path, { timeoutMs: 500 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    expect(await tryAcquireRead(a, path)).toBeNull();
    expect(await tryAcquireWrite(a, path)).toBeNull();
    expect(await childrenOf(a, path)).toEqual([baseName(hold.node as string)]);

    const reader = track(acquireRead(a, path, { data: 'zkrx-reader' }));
    await untilChildren(a, path, 2);
    const writer = track(acquireWrite(b, path, { data: 'zkrx-writer' }));
    await untilChildren(a, path, 3);
    await sleep(250);
    expect([reader.settled(), writer.settled()], `zkrx got in while ${kind} wrote`).toEqual([
      false,
      false,
    ]);

    const releasedAt = performance.now();
    await peer.release(hold.id);
    const readLease = await reader.promise;
    expect(reader.settledAt()).toBeGreaterThan(releasedAt);
    await expect(peer.acquire('write', path, { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(writer.settled(), 'zkrx writer got in beside a reader').toBe(false);

    const readerReleasedAt = performance.now();
    await readLease.release();
    const writeLease = await writer.promise;
    expect(writer.settledAt()).toBeGreaterThan(readerReleasedAt);
    await writeLease.release();
    await untilEmpty(a, path);
  });

  it(`readers of zkrx and ${kind} hold together, in either order, and keep both libraries' writers out`, async () => {
    const [a, b, c] = zkrx();
    const log = new ReadWriteLog();

    // zkrx first, the peer joins.
    const zkrxFirst = await acquireRead(a, path, { timeoutMs: 20_000 });
    const zkrxFirstRecord = log.enter('zkrx-a', 'read', zkrxFirst.node);
    const peerRead = await peer.acquire('read', path, { timeoutMs: 20_000 });
    const peerRecord = log.enter(`${kind}-a`, 'read', peerRead.node as string);
    // Each library's own account: both hold at this instant.
    expect(zkrxFirst.isHeld).toBe(true);
    expect(await peer.isHeld(peerRead.id)).toBe(true);

    // The peer alone, zkrx joins.
    log.exit(zkrxFirstRecord);
    await zkrxFirst.release();
    const zkrxSecond = await acquireRead(b, path, { timeoutMs: 20_000 });
    const zkrxSecondRecord = log.enter('zkrx-b', 'read', zkrxSecond.node);
    const zkrxThird = await tryAcquireRead(c, path);
    expect(zkrxThird, 'a zkrx reader was refused beside readers').not.toBeNull();
    const zkrxThirdRecord = log.enter('zkrx-c', 'read', (zkrxThird as Lease).node);
    expect(await peer.isHeld(peerRead.id)).toBe(true);

    // Writers of both libraries are kept out while the readers hold.
    await expect(peer.acquire('write', path, { timeoutMs: 400 })).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(await tryAcquireWrite(a, path)).toBeNull();
    await expect(acquireWrite(a, path, { timeoutMs: 300 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );

    for (const record of [peerRecord, zkrxSecondRecord, zkrxThirdRecord]) log.exit(record);
    await peer.release(peerRead.id);
    await zkrxSecond.release();
    await (zkrxThird as Lease).release();
    expect(log.violations).toEqual([]);
    // Overlap was allowed, and observed across the libraries both ways round.
    expect(log.crossLibraryReads).toBeGreaterThanOrEqual(3);
    expect(log.maxReaders()).toBe(3);
    // b's and c's releases finish in the background: a's listing may come first.
    await untilEmpty(a, path);
  });

  it(`FIFO: a ${kind} writer queued behind a zkrx reader gets in before a zkrx reader queued after it`, async () => {
    const [a, b] = zkrx();
    const first = await acquireRead(a, path, { data: 'zkrx-first' });
    const peerWriter = track(peer.acquire('write', path, { participantId: `${kind}-writer` }));
    await untilChildren(a, path, 2);
    const late = track(acquireRead(b, path, { data: 'zkrx-late' }));
    const names = await untilChildren(a, path, 3);

    // One queue, one order, by every library's reading.
    const order = sortChildren(names).map((child) => child.name);
    expect(sortChildren(names).map((child) => child.kind)).toEqual(['read', 'write', 'read']);
    expect(order.map(sequence)).toEqual([...order.map(sequence)].sort((x, y) => x - y));
    if (kind === 'curator') {
      expect((await peer.participants('rwlock', path)).nodes).toEqual(order);
      // (Curator's own getParticipantNodes() of a side lists only that side's nodes.)
      expect((await peer.participants('write', path)).nodes).toEqual([order[1]]);
    } else {
      const seen = await peer.participants('write', path);
      expect(seen.contenders).toEqual(['zkrx-first', `${kind}-writer`, 'zkrx-late']);
    }

    await sleep(250);
    expect(peerWriter.settled(), `${kind} writer got in beside a zkrx reader`).toBe(false);
    expect(late.settled(), 'a late zkrx reader jumped the queued writer').toBe(false);

    const releasedAt = performance.now();
    await first.release();
    const writerHold = await peerWriter.promise;
    expect(peerWriter.settledAt()).toBeGreaterThan(releasedAt);
    await sleep(150);
    expect(late.settled(), `a zkrx reader got in beside the ${kind} writer`).toBe(false);

    const writerReleasedAt = performance.now();
    await peer.release(writerHold.id);
    const lateLease = await late.promise;
    expect(late.settledAt()).toBeGreaterThan(writerReleasedAt);
    await lateLease.release();
  });

  it(`FIFO: a zkrx writer queued behind a ${kind} reader gets in before a ${kind} reader queued after it`, async () => {
    const [a] = zkrx();
    const first = await peer.acquire('read', path, { participantId: `${kind}-first` });
    const writer = track(acquireWrite(a, path, { data: 'zkrx-writer' }));
    await untilChildren(a, path, 2);
    const late = track(peer.acquire('read', path, { participantId: `${kind}-late` }));
    const names = await untilChildren(a, path, 3);

    const order = sortChildren(names).map((child) => child.name);
    expect(sortChildren(names).map((child) => child.kind)).toEqual(['read', 'write', 'read']);
    if (kind === 'curator') expect((await peer.participants('rwlock', path)).nodes).toEqual(order);
    else {
      const seen = await peer.participants('write', path);
      expect(seen.contenders).toEqual([`${kind}-first`, 'zkrx-writer', `${kind}-late`]);
    }

    await sleep(250);
    expect(writer.settled(), `zkrx writer got in beside a ${kind} reader`).toBe(false);
    expect(late.settled(), `a late ${kind} reader jumped the queued zkrx writer`).toBe(false);

    const releasedAt = performance.now();
    await peer.release(first.id);
    const writeLease = await writer.promise;
    expect(writer.settledAt()).toBeGreaterThan(releasedAt);
    await sleep(150);
    expect(late.settled(), `a ${kind} reader got in beside the zkrx writer`).toBe(false);

    const writerReleasedAt = performance.now();
    await writeLease.release();
    const lateHold = await late.promise;
    expect(late.settledAt()).toBeGreaterThan(writerReleasedAt);
    await peer.release(lateHold.id);
  });

  const loopTitle = loop.peerWritesOnly
    ? `2 zkrx clients (reading and writing) and 2 ${kind} sessions (writing: kazoo 2.8 readers deadlock with a writer queued behind them, #649) take 40 turns: no writer overlaps anyone`
    : `2 zkrx clients and 2 ${kind} sessions take 40 mixed read/write turns: no writer overlaps anyone`;
  it(loopTitle, async () => {
    const [a, b, observer] = zkrx();
    const contenders = [
      zkrxContender('zkrx-a', a),
      zkrxContender('zkrx-b', b),
      peerContender(`${kind}-a`, peer, 'a'),
      peerContender(`${kind}-b`, peer, 'b'),
    ];
    const rounds = 10;
    const random = seededRandom(loop.seed);
    const plans = contenders.map((contender) =>
      schedule(random, rounds, loop.peerWritesOnly && !contender.name.startsWith('zkrx')),
    );
    const log = new ReadWriteLog();
    await Promise.all(
      contenders.map(async (contender, index) => {
        for (const mode of plans[index] as HoldMode[]) {
          const held = await contender.take(mode, path);
          const record = log.enter(contender.name, mode, held.node);
          // The holder's place in the queue, as every library orders it (by sequence).
          const own = baseName(held.node);
          const ahead = (await observer.promises.children(path)).filter(
            (name) => name !== own && sequence(name) < sequence(own),
          );
          const blocking =
            mode === 'write' ? ahead : ahead.filter((name) => WRITER_NODE.test(name));
          if (blocking.length > 0) {
            log.violations.push(`${contender.name} ${mode} ${own} held behind ${blocking}`);
          }
          await sleep(mode === 'read' ? 15 : 3);
          log.exit(record);
          await held.release();
        }
      }),
    );
    expect(log.violations).toEqual([]);
    expect(log.writerOverlaps()).toEqual([]);
    expect(log.holds).toHaveLength(contenders.length * rounds);
    // Both libraries really read and wrote here.
    const did = (library: string, mode: HoldMode) =>
      log.holds.some((hold) => hold.who.startsWith(library) && hold.mode === mode);
    expect([did('zkrx', 'read'), did('zkrx', 'write'), did(kind, 'write')]).toEqual([
      true,
      true,
      true,
    ]);
    if (!loop.peerWritesOnly) expect(did(kind, 'read')).toBe(true);
    // zkrx releases finish in the background: the observer's listing may come first.
    await untilEmpty(observer, path);
  });

  it(`downgrade: a zkrx writer takes the read lock and releases write; a queued ${kind} writer waits for that read lock`, async () => {
    const [a] = zkrx();
    const write = await acquireWrite(a, path, { data: 'zkrx-writer' });
    const writerKey = baseName(write.node).slice(baseName(write.node).lastIndexOf('__WRIT__') + 8);
    const peerWriter = track(peer.acquire('write', path, { participantId: `${kind}-writer` }));
    const [peerNode] = (await untilChildren(a, path, 2)).filter(
      (name) => name !== baseName(write.node),
    );

    const read = await write.run(() =>
      acquireRead(a, path, { timeoutMs: 20_000, data: 'zkrx-downgraded' }),
    );
    // The downgrade node is Curator 5.5's: `_c_<uuid>-__READ__<the writer's sequence>`.
    expect(baseName(read.node)).toMatch(new RegExp(`^_c_${UUID}-__READ__${writerKey}$`));
    await write.release();
    expect((await childrenOf(a, path)).sort()).toEqual([baseName(read.node), peerNode].sort());

    // The peer library sees the downgrade node ahead of its writer...
    if (kind === 'curator') {
      const seen = await peer.participants('rwlock', path);
      expect(seen.nodes).toEqual([baseName(read.node), peerNode]);
    } else {
      const seen = await peer.participants('write', path);
      expect(seen.contenders).toEqual(['zkrx-downgraded', `${kind}-writer`]);
    }
    // ...so its writer, woken by the write node's deletion, keeps waiting.
    await sleep(300);
    expect(peerWriter.settled(), `${kind} writer got in while zkrx held the downgraded read`).toBe(
      false,
    );
    await expect(peer.acquire('write', path, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'timeout',
    });

    const releasedAt = performance.now();
    await read.release();
    const hold = await peerWriter.promise;
    expect(peerWriter.settledAt()).toBeGreaterThan(releasedAt);
    await peer.release(hold.id);
    expect(await childrenOf(a, path)).toEqual([]);
  });

  return {
    get peer() {
      return peer;
    },
    get clients() {
      return clients;
    },
    get path() {
      return path;
    },
  };
}

describe.skipIf(!availability.curator.available)(
  `Curator InterProcessReadWriteLock and zkrx rwlock on one path${skipNote('curator')}`,
  () => {
    const suite = readWriteInteropSuite('curator', { seed: 1, peerWritesOnly: false });

    it('Curator 5.4 downgrade: its read node queues behind writers already waiting, so the first of them (zkrx or Curator) holds beside the downgraded reader', async () => {
      // Curator's behaviour, not zkrx's: 5.4 grants the write holder's read lock at once but
      // creates an ordinary sequential __READ__ node, after every writer queued meanwhile. Once
      // the write lock is released, the first of those writers is first in line and holds while
      // Curator still reads. (Curator 5.5 names that node with the writer's sequence, as zkrx
      // does: see the zkrx downgrade test above.) If this test fails, Curator no longer does so.
      const [a] = suite.clients as [ZkClient];
      const { path, peer } = suite;
      for (const queued of ['zkrx', 'curator'] as const) {
        const write = await peer.acquire('write', path, { session: 'a' });
        const writer = track(
          queued === 'zkrx'
            ? acquireWrite(a, path, { timeoutMs: 3_000 }).then((lease) => ({
                isHeld: async () => lease.isHeld,
                release: () => lease.release(),
              }))
            : peer.acquire('write', path, { session: 'b', timeoutMs: 3_000 }).then((hold) => ({
                isHeld: () => peer.isHeld(hold.id),
                release: () => peer.release(hold.id),
              })),
        );
        const writerNode = (await untilChildren(a, path, 2)).find(
          (name) => name !== baseName(write.node as string),
        ) as string;

        const { node: readNode } = await peer.downgrade(write.id);
        expect(sequence(baseName(readNode))).toBeGreaterThan(sequence(writerNode));
        const held = await writer.promise;
        // Both hold at this instant: the queued writer and Curator's downgraded reader.
        expect(await held.isHeld()).toBe(true);
        expect(await peer.isHeld(write.id)).toBe(true);
        expect(await a.promises.exists(readNode)).not.toBeNull();
        await held.release();
        await peer.release(write.id);
        await untilEmpty(a, path);
      }
    });
  },
);

describe.skipIf(!availability.kazoo.available)(
  `kazoo ReadLock/WriteLock (extra_lock_patterns for Curator names) and zkrx rwlock on one path${skipNote('kazoo')}`,
  () => {
    const suite = readWriteInteropSuite('kazoo', { seed: 2, peerWritesOnly: true });

    it('kazoo 2.8 issue #649: a waiting kazoo reader watches a writer queued after it, and the two deadlock until the reader times out', async () => {
      // kazoo's bug, not zkrx's: ReadLock's contender pattern does not match its own __rlock__
      // node, so it takes the LAST writer in the queue as its predecessor. With the zkrx writer
      // before it gone, a correct reader would hold; kazoo 2.8 keeps waiting for the later zkrx
      // writer, which (rightly) waits for the reader. If this test fails, kazoo was fixed (2.9).
      const [a, b] = suite.clients as [ZkClient, ZkClient];
      const { path, peer } = suite;
      const first = await acquireWrite(a, path, { data: 'zkrx-first' });
      const reader = track(peer.acquire('read', path, { timeoutMs: 1_000 }));
      await untilChildren(a, path, 2);
      const later = track(acquireWrite(b, path, { data: 'zkrx-later' }));
      await untilChildren(a, path, 3);
      await first.release();

      // No writer is before the reader now, yet it does not get in; nor does the later writer.
      await sleep(400);
      expect([reader.settled(), later.settled()]).toEqual([false, false]);
      await expect(reader.promise).rejects.toMatchObject({ code: 'timeout' });
      // The reader's timeout removed its node; zkrx's later writer then gets in.
      const lease = await later.promise;
      await lease.release();
    });
  },
);
