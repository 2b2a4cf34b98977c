/**
 * The peers themselves against a real ZooKeeper: every recipe the protocol offers behaves as
 * its library does (so recipe packages can build interop tests on it), cancellation, session
 * expiry, error codes, and no process outliving its driver.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ZkClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
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
import type { PeerKind } from './errors';
import { peerCommand } from './launch';
import type { Peer, PeerEvent, PeerRecipe } from './peer';
import { startPeer } from './peer';

const availability = peerAvailability();
const skipNote = (kind: PeerKind) => {
  const support = availability[kind];
  return support.available ? '' : ` (skipped: ${support.reason})`;
};

const NODE = {
  curator: {
    read: /^_c_[0-9a-f-]{36}-__READ__\d{10}$/,
    write: /^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/,
    mutex: /^_c_[0-9a-f-]{36}-lock-\d{10}$/,
    lease: /^_c_[0-9a-f-]{36}-lease-\d{10}$/,
  },
  kazoo: {
    read: /^[0-9a-f]{32}__rlock__\d{10}$/,
    write: /^[0-9a-f]{32}__lock__\d{10}$/,
    mutex: /^[0-9a-f]{32}__lock__\d{10}$/,
    lease: /^[0-9a-f]{32}$/,
  },
} as const;

/** Waits for a peer's line on stdout that satisfies `accept`. */
function lineFrom(
  child: ReturnType<typeof spawn>,
  accept: (message: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const message = JSON.parse(line) as Record<string, unknown>;
      if (accept(message)) {
        lines.close();
        resolve(message);
      }
    });
    child.once('exit', () => reject(new Error('exited before the expected line')));
  });
}

interface Context {
  peer: Peer;
  observer: ZkClient;
  connectString: string;
  root: string;
}

/** One peer and one zkrx client for a describe block; a fresh root per test, checked empty after. */
function useContext(kind: PeerKind): Context {
  const context = {} as Context;
  beforeAll(async () => {
    ({ connectString: context.connectString } = await testZooKeeper());
    [context.peer, context.observer] = await Promise.all([
      startPeer(kind, { connectString: context.connectString }),
      openClient(),
    ]);
  });
  afterAll(async () => {
    await context.peer?.close();
    if (context.peer) expect(isAlive(context.peer.pid)).toBe(false);
    await context.observer?.close();
  });
  beforeEach(() => {
    context.root = interopRoot();
  });
  afterEach(async () => {
    const { observer, root } = context;
    expect(await ephemeralsUnder(observer, root)).toEqual([]);
    await removeTree(observer, root);
    expect(await observer.promises.exists(root)).toBeNull();
  });
  return context;
}

/** What both peers do the same way. */
function commonTests(kind: PeerKind, context: Context) {
  it('read locks are shared; a write lock waits for every reader, then keeps readers out', async () => {
    const { peer, observer, root } = context;
    const path = `${root}/rw`;
    const first = await peer.acquire('read', path);
    const second = await peer.acquire('read', path, { session: 'second' });
    expect(baseName(first.node as string)).toMatch(NODE[kind].read);
    await expect(
      peer.acquire('write', path, { session: 'third', timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'timeout' });

    const writer = track(peer.acquire('write', path, { session: 'third' }));
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 3);
    await peer.release(first.id);
    await sleep(200);
    expect(writer.settled(), 'writer got in beside a reader').toBe(false);
    await peer.release(second.id);
    const written = await writer.promise;
    expect(baseName(written.node as string)).toMatch(NODE[kind].write);
    await expect(peer.acquire('read', path, { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'timeout',
    });
    await peer.release(written.id);
    expect(await childrenOf(observer, path)).toEqual([]);
  });

  it('a semaphore of 2 leases lets 2 in and the third waits for a lease', async () => {
    const { peer, observer, root } = context;
    const path = `${root}/semaphore`;
    const first = await peer.acquire('semaphore', path, { leases: 2 });
    const second = await peer.acquire('semaphore', path, { leases: 2, session: 'second' });
    expect(baseName(first.node as string)).toMatch(NODE[kind].lease);
    expect(first.node).not.toBe(second.node);
    await expect(
      peer.acquire('semaphore', path, { leases: 2, session: 'third', timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    const third = track(peer.acquire('semaphore', path, { leases: 2, session: 'third' }));
    await sleep(200);
    expect(third.settled()).toBe(false);
    await peer.release(first.id);
    const hold = await third.promise;
    await peer.release(second.id);
    await peer.release(hold.id);
    expect(await ephemeralsUnder(observer, root)).toEqual([]);
  });

  it('aborting a waiting acquire cancels it in the peer and removes its node', async () => {
    const { peer, observer, root } = context;
    const path = `${root}/lock`;
    const held = await peer.acquire('mutex', path);
    const controller = new AbortController();
    const waiting = track(
      peer.acquire('mutex', path, { session: 'second', signal: controller.signal }),
    );
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 2);
    controller.abort();
    await expect(waiting.promise).rejects.toMatchObject({ code: 'cancelled' });
    // Curator deletes the node of an interrupted acquire with a guaranteed delete, which goes on
    // in the background when the interrupted thread's own delete call is cut short.
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 1, {
      timeout: 10_000,
    });
    expect(await childrenOf(observer, path)).toEqual([baseName(held.node as string)]);
    expect(await peer.isHeld(held.id)).toBe(true);
    await peer.release(held.id);
    await expect(peer.isHeld(held.id)).rejects.toMatchObject({ code: 'unknown-handle' });
  });

  it('answers unknown handles, unsupported recipes and bad requests with their codes', async () => {
    const { peer, root } = context;
    await expect(peer.release('no-such-hold')).rejects.toMatchObject({ code: 'unknown-handle' });
    await expect(peer.acquire('queue' as PeerRecipe, `${root}/x`)).rejects.toMatchObject({
      code: 'unsupported',
    });
    await expect(peer.acquire('semaphore', `${root}/x`)).rejects.toMatchObject({
      code: 'bad-request',
    });
    await expect(peer.acquire('mutex', 'relative/path')).rejects.toMatchObject({
      code: 'bad-request',
    });
    await peer.ping();
  });

  it('exits by itself when its stdin closes, so no peer outlives a crashed driver', async () => {
    const { connectString } = context;
    const { command, args } = await peerCommand(kind, { connectString });
    const child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      await lineFrom(child, (message) => message.event === 'ready');
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.stdin.end();
      expect(await exited).toBe(0);
      expect(isAlive(child.pid as number)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
}

describe.skipIf(!availability.curator.available)(`Curator peer${skipNote('curator')}`, () => {
  const context = useContext('curator');
  commonTests('curator', context);

  it('LeaderLatch: the first participant leads, the next takes over when it closes', async () => {
    const { peer, observer, root } = context;
    const path = `${root}/latch`;
    const events: PeerEvent[] = [];
    const stop = peer.onEvent((event) => events.push(event));
    const alice = await peer.latchStart(path, { participantId: 'alice' });
    expect(await peer.latchAwait(alice, 5_000)).toBe(true);
    const bob = await peer.latchStart(path, { participantId: 'bob', session: 'second' });
    expect(await peer.latchAwait(bob, 300)).toBe(false);

    const status = await peer.latchStatus(bob);
    expect(status).toMatchObject({
      hasLeadership: false,
      leader: 'alice',
      participants: [
        { id: 'alice', isLeader: true },
        { id: 'bob', isLeader: false },
      ],
      state: 'STARTED',
    });
    expect(baseName(status.node as string)).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);
    expect((await peer.participants('latch', path)).participants).toEqual(status.participants);

    await peer.latchClose(alice);
    expect(await peer.latchAwait(bob, 5_000)).toBe(true);
    expect((await peer.latchStatus(bob)).leader).toBe('bob');
    await peer.latchClose(bob);
    stop();
    expect(events.filter((event) => event.event === 'leadership')).toEqual([
      { event: 'leadership', handle: alice, isLeader: true },
      { event: 'leadership', handle: alice, isLeader: false },
      { event: 'leadership', handle: bob, isLeader: true },
      { event: 'leadership', handle: bob, isLeader: false },
    ]);
    expect(await childrenOf(observer, path)).toEqual([]);
  });

  it('LeaderSelector: held while leading, queued on lock- nodes like the mutex', async () => {
    const { peer, observer, root } = context;
    const path = `${root}/selector`;
    const leader = await peer.acquire('selector', path, { participantId: 'first' });
    expect(baseName(leader.node as string)).toMatch(NODE.curator.mutex);
    await expect(
      peer.acquire('selector', path, {
        participantId: 'second',
        session: 'second',
        timeoutMs: 300,
      }),
    ).rejects.toMatchObject({ code: 'timeout' });
    await peer.release(leader.id);
    expect(await childrenOf(observer, path)).toEqual([]);
  });

  it('a session expired through its credentials loses the lock without Curator telling the holder', async () => {
    const { peer, observer, root, connectString } = context;
    const path = `${root}/lock`;
    const events: PeerEvent[] = [];
    const stop = peer.onEvent((event) => events.push(event));
    const held = await peer.acquire('mutex', path, { session: 'doomed' });
    const credentials = await peer.sessionCredentials('doomed');
    expect(credentials.sessionId).toMatch(/^[0-9a-f]+$/);
    await expireSession({ connectString, ...credentials });
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 0, {
      timeout: 10_000,
    });
    // zkrx now gets the lock that the Curator "holder" still thinks it has.
    const lease = await acquire(observer, path, { timeoutMs: 5_000 });
    await vi.waitUntil(
      () =>
        events.some(
          (event) =>
            event.event === 'connection' && event.session === 'doomed' && event.state === 'LOST',
        ),
      { timeout: 10_000 },
    );
    // The session is gone and zkrx holds, yet Curator's mutex still reports itself held.
    expect(await peer.isHeld(held.id)).toBe(true);
    await lease.release();
    await peer.release(held.id); // Curator's release of a vanished node succeeds quietly
    await peer.closeSession('doomed');
    stop();
  });

  it('runs with the single-file launcher too (java -cp <Curator jars> InteropPeer.java)', async () => {
    const { root, connectString } = context;
    const single = await startPeer('curator', { connectString, javaMode: 'source' });
    try {
      expect(single.version).toMatch(/^5\./);
      const hold = await single.acquire('mutex', `${root}/lock`);
      await single.release(hold.id);
    } finally {
      await single.close();
    }
    expect(isAlive(single.pid)).toBe(false);
  });
});

describe.skipIf(!availability.kazoo.available)(`kazoo peer${skipNote('kazoo')}`, () => {
  const context = useContext('kazoo');
  commonTests('kazoo', context);

  it('has no latch or selector: those are unsupported', async () => {
    const { peer, root } = context;
    expect(peer.version).toMatch(/^2\./);
    await expect(peer.latchStart(`${root}/latch`)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(peer.acquire('selector', `${root}/selector`)).rejects.toMatchObject({
      code: 'unsupported',
    });
  });
});
