/**
 * leader-failover: C candidates (one session each) stand in one election; each round the
 * leader closes its session, and the latency runs from that close call until the next
 * candidate knows it leads (its `leadership$` says true). A replacement candidate joins every
 * round, so C stays constant (its session and registration count in the round's time and
 * packets, as in the peers). At most one leader at once, elected in join order.
 */
import { joinPath, type ZkClient } from '@zkrx/core';
import { type Election, joinElection } from '@zkrx/leader';
import type { ScenarioResult } from '../run-context';
import type { Scenario } from '../scenario';

interface Candidate {
  readonly id: number;
  readonly client: ZkClient;
  readonly election: Election;
  electedAt: number;
}

/** Elected candidates in the order they learnt they lead; `take` waits for the next. */
class ElectedQueue {
  private readonly items: Candidate[] = [];
  private waiter: ((candidate: Candidate) => void) | undefined;

  get size(): number {
    return this.items.length;
  }

  push(candidate: Candidate): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(candidate);
    else this.items.push(candidate);
  }

  take(): Promise<Candidate> {
    const first = this.items.shift();
    if (first) return Promise.resolve(first);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

export const leaderFailover: Scenario = {
  name: 'leader-failover',
  summary: 'C candidates; the leader closes its session; latency = close call to next leader',
  defaultClients: 8,
  defaultOps: 200,
  warmupFor: (ops) => Math.max(5, Math.floor(ops / 4)),
  warmupHoldMs: 0,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, warmup, ops } = context.settings;
    if (count < 2) throw new Error('leader-failover needs --clients >= 2');
    const path = joinPath(context.base, 'election');
    const elected = new ElectedQueue();
    const line: Candidate[] = []; // in join (= queue) order
    let leaders = 0;
    let nextId = 0;
    let finished = false;

    const join = async (): Promise<void> => {
      const id = nextId++;
      const client = await context.connect();
      const election = joinElection(client, path, { id: `c${id}` });
      await context.guard(election.joined);
      const candidate: Candidate = { id, client, election, electedAt: 0 };
      line.push(candidate);
      election.leadership$.subscribe((leading) => {
        if (!leading || finished) return;
        candidate.electedAt = performance.now();
        leaders += 1;
        // Never throw from a watch callback: flag the violation, the run ends with exit 2.
        if (leaders !== 1)
          context.flagViolation(`leader-failover: ${leaders} leaders at once (c${id})`);
        elected.push(candidate);
      });
    };

    for (let index = 0; index < count; index++) await join();
    let leader = await context.guard(elected.take());
    if (leader !== line[0]) throw new Error('the first leader is not the first candidate');

    const latencies: number[] = [];
    let endWindow: (() => Promise<number>) | undefined;
    let measuredFrom = 0;
    context.beginPhase('warm-up', warmup);
    for (let round = 0; round < warmup + ops; round++) {
      if (round === warmup) {
        context.endPhase();
        endWindow = await context.packetWindow();
        measuredFrom = performance.now();
        context.beginPhase('measured', ops);
      }
      line.shift();
      const expected = line[0];
      const closeCall = performance.now();
      leaders -= 1;
      const closing = leader.client.close(); // a clean session close: the server drops its node
      context.forget(leader.client);
      const next = await context.guard(elected.take());
      if (next !== expected) {
        context.violated(
          `leader-failover: c${next.id} elected out of order (expected c${expected?.id})`,
        );
      }
      if (round >= warmup) latencies.push(next.electedAt - closeCall);
      await context.guard(closing);
      await join(); // the replacement keeps C candidates (counted in time and packets)
      leader = next;
      context.tick();
    }
    const elapsedMs = performance.now() - measuredFrom;
    const packets = endWindow ? await endWindow() : 0;
    context.endPhase();
    if (elected.size > 0) context.violated('leader-failover: an unexpected extra leader');
    finished = true; // closing the rest (newest first) may elect leaders: not counted
    return { latencies, elapsedMs, packets, clients: count };
  },
};
