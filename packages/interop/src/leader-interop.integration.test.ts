/**
 * zkrx's leader election on one path with Curator's LeaderLatch and LeaderSelector (Java): one
 * leader between the libraries, `watchLeader` agreeing with Curator at every step, alternating terms.
 */
import type { ZkClient } from '@zkrx/core';
import {
  type Election,
  joinElection,
  type LeaderInfo,
  watchLeader,
  whileLeader,
} from '@zkrx/leader';
import { sortChildren } from '@zkrx/lock/recipe';
import { expireSession, testZooKeeper } from '@zkrx/testing';
import { Observable } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HoldLog, type HoldRecord } from '../test/holds';
import { isAlive } from '../test/processes';
import {
  ephemeralsUnder,
  interopRoot,
  openClient,
  removeTree,
  sleep,
  track,
  untilChildren,
} from '../test/zookeeper';
import { peerAvailability } from './availability';
import type { Peer, PeerEvent, PeerHold } from './peer';
import { startPeer } from './peer';

const { curator } = peerAvailability();

/** The latest value of `watchLeader`, kept while the test runs. */
function follow(source: Observable<LeaderInfo>) {
  const state: { latest: LeaderInfo | undefined; errors: unknown[] } = {
    latest: undefined,
    errors: [],
  };
  const subscription = source.subscribe({
    next: (info) => {
      state.latest = info;
    },
    error: (error: unknown) => state.errors.push(error),
  });
  return { state, stop: () => subscription.unsubscribe() };
}

describe.skipIf(!curator.available)(
  `Curator LeaderLatch / LeaderSelector and zkrx leader on one path${curator.available ? '' : ` (skipped: ${curator.reason})`}`,
  () => {
    let peer: Peer;
    let clients: ZkClient[] = [];
    let root: string;
    let path: string;
    let view: ReturnType<typeof follow>;
    /** Curator's leadership events, by latch handle. */
    let javaEvents: Map<string, boolean[]>;
    let stopEvents: () => void;

    beforeAll(async () => {
      const { connectString } = await testZooKeeper();
      const started = startPeer('curator', { connectString });
      clients = await Promise.all([openClient(), openClient(), openClient()]);
      peer = await started;
    });

    afterAll(async () => {
      await peer?.close();
      if (peer) expect(isAlive(peer.pid), `curator peer ${peer.pid} is gone`).toBe(false);
      await Promise.all(clients.map((client) => client.close()));
    });

    beforeEach(() => {
      root = interopRoot();
      path = `${root}/leader`;
      view = follow(watchLeader(observer(), path));
      javaEvents = new Map();
      stopEvents = peer.onEvent((event: PeerEvent) => {
        if (event.event !== 'leadership') return;
        javaEvents.set(event.handle, [...(javaEvents.get(event.handle) ?? []), event.isLeader]);
      });
    });

    afterEach(async () => {
      view.stop();
      stopEvents();
      expect(view.state.errors).toEqual([]);
      expect(await ephemeralsUnder(observer(), root)).toEqual([]);
      await removeTree(observer(), root);
      expect(await observer().promises.exists(root)).toBeNull();
    });

    const observer = () => clients[2] as ZkClient;

    /** The candidates standing, by participant id: Java latch handles and Node elections. */
    interface Candidates {
      readonly java: Map<string, string>;
      readonly node: Map<string, Election>;
    }

    /**
     * Every view of the election at `path` says the same: `watchLeader`, Curator's getParticipants()
     * and each Java latch's getLeader()/getParticipants() list `ids` in this order, the first
     * leading; and by their own accounts exactly that candidate leads, nobody else.
     */
    async function expectAgreement(ids: readonly string[], candidates: Candidates): Promise<void> {
      const expected = ids.map((id, index) => ({ id, isLeader: index === 0 }));
      await expect
        .poll(() => view.state.latest, { timeout: 5_000 })
        .toEqual({ leaderId: ids[0], participants: expected });
      expect((await peer.participants('latch', path)).participants).toEqual(expected);
      for (const handle of candidates.java.values()) {
        const status = await peer.latchStatus(handle);
        expect(status.leader).toBe(ids[0] ?? '');
        expect(status.participants).toEqual(expected);
      }
      // Each candidate's own account (it learns through its watch: wait for the leader's).
      const leaders = async () => {
        const leading: string[] = [];
        for (const [id, handle] of candidates.java) {
          if ((await peer.latchStatus(handle)).hasLeadership) leading.push(id);
        }
        for (const [id, election] of candidates.node) if (election.isLeader) leading.push(id);
        return leading;
      };
      await expect.poll(leaders, { timeout: 5_000 }).toEqual(ids.length > 0 ? [ids[0]] : []);
    }

    /** A Node candidate whose every leadership change is recorded. */
    async function nodeCandidate(client: ZkClient, id: string) {
      const election = joinElection(client, path, { id });
      await election.joined;
      const changes: boolean[] = [];
      election.leadership$.subscribe((leading) => changes.push(leading));
      return { election, changes };
    }

    it('a Java latch and Node candidates queued alternately: one leader, watchLeader agrees with Curator as each leader closes', async () => {
      const [a, b] = clients as [ZkClient, ZkClient];
      const candidates: Candidates = { java: new Map(), node: new Map() };

      // Java first, then Node, Java, Node.
      const java1 = await peer.latchStart(path, { participantId: 'java-1' });
      expect(await peer.latchAwait(java1, 5_000)).toBe(true);
      candidates.java.set('java-1', java1);
      await expectAgreement(['java-1'], candidates);
      const node1 = await nodeCandidate(a, 'node-1');
      candidates.node.set('node-1', node1.election);
      await expectAgreement(['java-1', 'node-1'], candidates);
      const java2 = await peer.latchStart(path, { participantId: 'java-2', session: 'second' });
      candidates.java.set('java-2', java2);
      await expectAgreement(['java-1', 'node-1', 'java-2'], candidates);
      const node2 = await nodeCandidate(b, 'node-2');
      candidates.node.set('node-2', node2.election);
      await expectAgreement(['java-1', 'node-1', 'java-2', 'node-2'], candidates);
      // Nobody behind the leader took over meanwhile.
      await sleep(200);
      expect(await peer.latchAwait(java2, 1)).toBe(false);
      expect([node1.election.isLeader, node2.election.isLeader]).toEqual([false, false]);

      // Close the leader, side after side: the next in line leads, every view follows.
      await peer.latchClose(java1);
      candidates.java.delete('java-1');
      await node1.election.whenLeader();
      await expectAgreement(['node-1', 'java-2', 'node-2'], candidates);

      await node1.election.leave();
      candidates.node.delete('node-1');
      expect(await peer.latchAwait(java2, 5_000)).toBe(true);
      await expectAgreement(['java-2', 'node-2'], candidates);

      await peer.latchClose(java2);
      candidates.java.delete('java-2');
      await node2.election.whenLeader();
      await expectAgreement(['node-2'], candidates);

      await node2.election.leave();
      candidates.node.delete('node-2');
      await expectAgreement([], candidates);

      // Each led exactly once, and only when its turn came.
      expect(node1.changes).toEqual([false, true, false]);
      expect(node2.changes).toEqual([false, true, false]);
      expect(javaEvents.get(java1)).toEqual([true, false]);
      expect(javaEvents.get(java2)).toEqual([true, false]);
    });

    it('a Node candidate first, then Java: Node leads; a closing follower changes nothing; Java takes over when Node closes', async () => {
      const [a, b] = clients as [ZkClient, ZkClient];
      const candidates: Candidates = { java: new Map(), node: new Map() };

      const node1 = await nodeCandidate(a, 'node-1');
      await node1.election.whenLeader();
      candidates.node.set('node-1', node1.election);
      await expectAgreement(['node-1'], candidates);
      const java1 = await peer.latchStart(path, { participantId: 'java-1' });
      candidates.java.set('java-1', java1);
      await expectAgreement(['node-1', 'java-1'], candidates);
      expect(await peer.latchAwait(java1, 250)).toBe(false);

      // A follower leaves (Java): the leader stays.
      await peer.latchClose(java1);
      candidates.java.delete('java-1');
      await expectAgreement(['node-1'], candidates);
      expect(node1.election.isLeader).toBe(true);

      // Java again, and another Node candidate behind it; the Node leader closes.
      const java2 = await peer.latchStart(path, { participantId: 'java-2' });
      candidates.java.set('java-2', java2);
      await expectAgreement(['node-1', 'java-2'], candidates);
      const node2 = await nodeCandidate(b, 'node-2');
      candidates.node.set('node-2', node2.election);
      await expectAgreement(['node-1', 'java-2', 'node-2'], candidates);
      await node1.election.leave();
      candidates.node.delete('node-1');
      expect(await peer.latchAwait(java2, 5_000)).toBe(true);
      await expectAgreement(['java-2', 'node-2'], candidates);
      await sleep(150);
      expect(node2.election.isLeader, 'node-2 leads beside java-2').toBe(false);

      await peer.latchClose(java2);
      candidates.java.delete('java-2');
      await node2.election.whenLeader();
      await expectAgreement(['node-2'], candidates);
      await node2.election.leave();
      candidates.node.delete('node-2');
      await expectAgreement([], candidates);

      expect(node1.changes).toEqual([false, true, false]);
      expect(node2.changes).toEqual([false, true, false]);
      expect(javaEvents.get(java1)).toBeUndefined(); // never led, so never told
      expect(javaEvents.get(java2)).toEqual([true, false]);
    });

    it("an expired leader's session hands leadership across: zkrx to Curator, then Curator to zkrx; each stands again behind", async () => {
      const [a] = clients as [ZkClient];
      const { connectString } = await testZooKeeper();
      const candidates: Candidates = { java: new Map(), node: new Map() };
      const node1 = await nodeCandidate(a, 'node-1');
      await node1.election.whenLeader();
      candidates.node.set('node-1', node1.election);
      const java1 = await peer.latchStart(path, { participantId: 'java-1', session: 'expiring' });
      candidates.java.set('java-1', java1);
      await expectAgreement(['node-1', 'java-1'], candidates);

      // zkrx's session expires: its node goes, Java leads, zkrx stands again on its new session.
      await expireSession(a);
      expect(await peer.latchAwait(java1, 5_000)).toBe(true);
      await expectAgreement(['java-1', 'node-1'], candidates);
      expect(node1.changes).toEqual([false, true, false]);

      // Curator's session expires: zkrx leads again, Curator's latch stands again behind it.
      await expireSession({ connectString, ...(await peer.sessionCredentials('expiring')) });
      await node1.election.whenLeader();
      await expectAgreement(['node-1', 'java-1'], candidates);
      expect(node1.changes).toEqual([false, true, false, true]);
      expect(javaEvents.get(java1)).toEqual([true, false]);

      await peer.latchClose(java1);
      await node1.election.leave();
      candidates.java.clear();
      candidates.node.clear();
      await expectAgreement([], candidates);
    });

    it('Curator LeaderSelector and zkrx whileLeader: at most one runs leader work at any time, and terms alternate as each hands over', async () => {
      const [a] = clients as [ZkClient];
      const log = new HoldLog();
      /** Node's terms: each ends (hands over) when the test says so. */
      const terms: { end(): void }[] = [];
      const work = () =>
        new Observable<never>((subscriber) => {
          const record = log.enter('zkrx-node', `term ${terms.length + 1}`);
          terms.push({ end: () => subscriber.complete() });
          return () => log.exit(record);
        });

      // Java leads first.
      let javaHold: PeerHold = await peer.acquire('selector', path, {
        participantId: 'java',
        timeoutMs: 5_000,
      });
      let javaRecord: HoldRecord = log.enter('curator-java', javaHold.node as string);
      const errors: unknown[] = [];
      const node = whileLeader(a, path, work, { id: 'node' }).subscribe({
        error: (error: unknown) => errors.push(error),
      });
      const names = await untilChildren(observer(), path, 2);
      // watchLeader reads the selector's queue (lock- nodes, data = id), and Curator agrees on it.
      await expect
        .poll(() => view.state.latest, { timeout: 5_000 })
        .toEqual({
          leaderId: 'java',
          participants: [
            { id: 'java', isLeader: true },
            { id: 'node', isLeader: false },
          ],
        });
      expect((await peer.participants('selector', path)).nodes).toEqual(
        sortChildren(names).map((child) => child.name),
      );
      await sleep(250);
      expect(terms, 'Node work started while Java led').toHaveLength(0);

      const rounds = 3;
      for (let round = 1; round <= rounds; round++) {
        // Java hands over: Node's next term starts.
        log.exit(javaRecord);
        await peer.release(javaHold.id);
        await expect.poll(() => terms.length, { timeout: 5_000 }).toBe(round);

        // Java stands again, behind Node, and must not lead during Node's term.
        const javaNext = track(peer.acquire('selector', path, { participantId: 'java' }));
        await untilChildren(observer(), path, 2);
        await sleep(150);
        expect(javaNext.settled(), `Java led during Node's term ${round}`).toBe(false);

        // Node hands over (its work completes; whileLeader stands again behind Java).
        (terms[round - 1] as { end(): void }).end();
        javaHold = await javaNext.promise;
        javaRecord = log.enter('curator-java', javaHold.node as string);
        await untilChildren(observer(), path, 2);
        await sleep(150);
        expect(terms, `Node's term ${round + 1} started while Java led`).toHaveLength(round);
      }
      log.exit(javaRecord);
      await peer.release(javaHold.id);
      await expect.poll(() => terms.length, { timeout: 5_000 }).toBe(rounds + 1);
      node.unsubscribe();
      await untilChildren(observer(), path, 0);

      expect(errors).toEqual([]);
      expect(log.violations).toEqual([]);
      expect(log.overlaps()).toEqual([]);
      expect(log.holds.map((hold) => hold.who)).toEqual([
        'curator-java',
        'zkrx-node',
        'curator-java',
        'zkrx-node',
        'curator-java',
        'zkrx-node',
        'curator-java',
        'zkrx-node',
      ]);
    });
  },
);
