import type { ZkClient } from '@zkrx/core';
import { LeaseReleasedError, LockLostError } from '@zkrx/lock';
import { sortChildren } from '@zkrx/lock/recipe';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  proxiedClient,
  sleep,
  untilWatching,
} from '@zkrx/test-support';
import { expireSession, type TcpProxy, testZooKeeper } from '@zkrx/testing';
import { filter, firstValueFrom, Observable, of } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { joinElection, type LeaderInfo, leadership, watchLeader, whileLeader } from './index';

/** Leader work that records itself in the log while subscribed. */
function leaderWork(log: IntervalLog, who: string, running: Set<string>): () => Observable<never> {
  return () =>
    new Observable<never>(() => {
      const record = log.enter(who);
      running.add(who);
      return () => {
        running.delete(who);
        log.exit(record);
      };
    });
}

describe('leader election', () => {
  it('elects one of several candidates and hands over when the leader closes', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const states = { a: [] as boolean[], b: [] as boolean[] };
    leadership(a!, path, { id: 'a' }).subscribe((leading) => states.a.push(leading));
    await vi.waitUntil(() => states.a.at(-1) === true);
    leadership(b!, path, { id: 'b' }).subscribe((leading) => states.b.push(leading));
    await sleep(100);
    expect(states.b).toEqual([false]);
    await a!.close();
    await vi.waitUntil(() => states.b.at(-1) === true);
    expect(states.a).toEqual([false, true, false]);
  });

  it('10 candidates, leaders expired or closed in turn: never two leaders working at once, a new one each time', async () => {
    const { connectString } = await testZooKeeper();
    const path = lockPath('fleet');
    const log = new IntervalLog(1);
    const running = new Set<string>();
    // Candidates lead in the order they join: even ones connect directly and are closed, odd ones
    // go through a proxy and are partitioned then expired. (A proxy in this process cannot relay
    // a closeSession while the C client's close blocks the event loop waiting for its answer.)
    const candidates: { id: string; client: ZkClient; proxy: TcpProxy | undefined }[] = [];
    for (let index = 0; index < 10; index++) {
      const { client, proxy } =
        index % 2 === 1
          ? await proxiedClient({ sessionTimeoutMs: 2_000 })
          : { client: await connectedClient({ sessionTimeoutMs: 2_000 }), proxy: undefined };
      const id = `w${index}`;
      whileLeader(client, path, leaderWork(log, id, running), { id }).subscribe({
        error: () => {},
      });
      candidates.push({ id, client, proxy });
      await vi.waitUntil(async () => (await childrenOf(client, path)).length === index + 1);
    }
    await vi.waitUntil(() => running.size === 1);
    const failovers: number[] = [];
    for (let round = 0; round < 6; round++) {
      const leaderId = [...running][0]!;
      const leader = candidates.find((candidate) => candidate.id === leaderId)!;
      expect(leaderId).toBe(`w${round}`);
      const started = performance.now();
      if (!leader.proxy) {
        await leader.client.close();
      } else {
        // A partitioned leader: it stops at once (suspended), then its session expires.
        leader.proxy.refuse(true);
        leader.proxy.cut();
        await vi.waitUntil(() => !running.has(leaderId));
        await expireSession({ ...leader.client.sessionCredentials()!, connectString });
      }
      await vi.waitUntil(() => running.size === 1 && !running.has(leaderId), { timeout: 10_000 });
      // How long each failover took is the machine's pace: printed below, not asserted.
      failovers.push(performance.now() - started);
      candidates.splice(candidates.indexOf(leader), 1);
    }
    expect(log.violations).toEqual([]);
    expect(new Set(log.holds.map((hold) => hold.who)).size).toBe(7);
    console.info(`leader failover ms: ${failovers.map((ms) => ms.toFixed(1)).join(', ')}`);
  });

  it('whileLeader unsubscribes the work when leadership is lost by suspension, expiry or close', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 2_000 });
    const path = lockPath('election');
    const log = new IntervalLog(1);
    const running = new Set<string>();
    whileLeader(a, path, leaderWork(log, 'a', running), { id: 'a' }).subscribe();
    await vi.waitUntil(() => running.has('a'));
    // Suspension (default policy): the term ends at once, and a leads again once reconnected.
    proxy.cut();
    await vi.waitUntil(() => log.holds.length === 2 && running.has('a'), { timeout: 5_000 });
    expect(log.holds[0]!.end).toBeLessThanOrEqual(log.holds[1]!.start);
    // Expiry: the term ends, then a stands again on its new session.
    await expireSession(a);
    await vi.waitUntil(() => log.holds.length === 3 && running.has('a'), { timeout: 5_000 });
    expect(log.holds[1]!.end).toBeLessThanOrEqual(log.holds[2]!.start);
    // Close: stops for good.
    await a.close();
    expect(running.has('a')).toBe(false);
    expect(log.holds.length).toBe(3);
  });

  it('whileLeader hands leadership over when the work completes, and queues again', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const order: string[] = [];
    const work = (who: string) => () => {
      order.push(who);
      return sleep(20).then(() => who);
    };
    const results: string[] = [];
    whileLeader(a!, path, work('a'), { id: 'a' }).subscribe((value) => results.push(value));
    whileLeader(b!, path, work('b'), { id: 'b' }).subscribe((value) => results.push(value));
    await vi.waitUntil(() => order.length >= 6);
    // Each term ends with the work: the two alternate.
    for (let index = 1; index < 6; index++) expect(order[index]).not.toBe(order[index - 1]);
    const once: string[] = [];
    const c = await connectedClient();
    await firstValueFrom(
      whileLeader(c, lockPath('once'), () => of('done'), { requeue: false }).pipe(filter(Boolean)),
    );
    once.push('done');
    expect(once).toEqual(['done']);
  });

  it('watchLeader tells anyone who leads and who stands, and follows changes', async () => {
    const [a, b, observer] = await connectedClients(3);
    const path = lockPath('election');
    const seen: LeaderInfo[] = [];
    watchLeader(observer!, path).subscribe((info) => seen.push(info));
    await vi.waitUntil(() => seen.length === 1);
    expect(seen[0]).toEqual({ leaderId: undefined, participants: [] });
    const first = joinElection(a!, path, { id: 'alpha' });
    await first.joined;
    await first.whenLeader();
    const second = joinElection(b!, path, { id: 'beta' });
    await second.joined;
    await vi.waitUntil(() => seen.at(-1)?.participants.length === 2);
    expect(seen.at(-1)).toEqual({
      leaderId: 'alpha',
      participants: [
        { id: 'alpha', isLeader: true },
        { id: 'beta', isLeader: false },
      ],
    });
    await first.leave();
    await vi.waitUntil(() => seen.at(-1)?.leaderId === 'beta');
    await second.leave();
    await vi.waitUntil(() => seen.at(-1)?.leaderId === undefined);
  });

  it('joinElection gives a live state, a signal per term, and close hands over within a round trip', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const first = joinElection(a!, path, { id: 'a' });
    await first.joined;
    const signal = await first.whenLeader();
    expect(first.isLeader).toBe(true);
    expect(signal.aborted).toBe(false);
    // 'continue': an expiry is not first seen as a suspension (the default's loss).
    const second = joinElection(b!, path, { id: 'b', onSuspended: 'continue' });
    await second.joined;
    expect(second.isLeader).toBe(false);
    expect(second.signal.aborted).toBe(true);
    const handover = second.whenLeader();
    await first.leave();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseReleasedError);
    expect(first.isLeader).toBe(false);
    const secondSignal = await handover;
    expect(secondSignal.aborted).toBe(false);
    await expireSession(b!);
    await vi.waitUntil(() => secondSignal.aborted);
    // The term ends with the typed loss and its reason, as a lease's signal does.
    expect(secondSignal.reason).toBeInstanceOf(LockLostError);
    expect(secondSignal.reason).toMatchObject({ reason: 'session-expired' });
    // It stands again on its new session and, alone, leads again.
    await second.whenLeader();
    await second.leave();
  });

  it('hands each term a fencing token that grows from one leader to the next', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const terms: { who: string; fencingToken: number; node: string }[] = [];
    const work = (who: string) => (term: { fencingToken: number; node: string }) => {
      terms.push({ who, fencingToken: term.fencingToken, node: term.node });
      return of(who);
    };
    // Each term's work completes at once: the candidates take turns (requeue).
    const first = whileLeader(a!, path, work('a'), { id: 'a' }).subscribe();
    const second = whileLeader(b!, path, work('b'), { id: 'b' }).subscribe();
    await vi.waitUntil(() => terms.length >= 4, { timeout: 20_000 });
    first.unsubscribe();
    second.unsubscribe();
    for (let index = 1; index < terms.length; index++) {
      expect(terms[index]!.fencingToken).toBeGreaterThan(terms[index - 1]!.fencingToken);
    }
    expect(terms[0]!.node.startsWith(`${path}/`)).toBe(true);
    const election = joinElection(a!, lockPath('election'), { id: 'a' });
    await election.joined;
    expect(election.fencingToken).toBeUndefined();
    await election.whenLeader();
    expect(election.fencingToken).toBeGreaterThan(terms.at(-1)!.fencingToken);
    await election.leave();
    expect(election.fencingToken).toBeUndefined();
  });

  it('close() stops leading at once, waits for the tracked runs, then hands over: never two leaders', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const first = joinElection(a!, path, { id: 'a' });
    await first.joined;
    await first.whenLeader();
    let finishRun: () => void = () => {};
    const runSignals: AbortSignal[] = [];
    const run = first.runIfLeader(
      (signal) =>
        new Promise<void>((resolve) => {
          runSignals.push(signal);
          finishRun = resolve;
        }),
    );
    expect(run).toBeInstanceOf(Promise);
    const second = joinElection(b!, path, { id: 'b' });
    await second.joined;
    const closing = first.leave();
    // Stepped down at once, and the run is asked to finish...
    expect(first.isLeader).toBe(false);
    expect(runSignals[0]!.aborted).toBe(true);
    expect(runSignals[0]!.reason).toBeInstanceOf(LeaseReleasedError);
    expect(first.runIfLeader(() => 'ran')).toBeUndefined();
    // ...while the node stays: the next candidate waits for the run to end.
    await untilWatching(
      await testZooKeeper(),
      b!,
      `${path}/${sortChildren(await childrenOf(a!, path))[0]!.name}`,
      second.whenLeader(),
    );
    expect(second.isLeader).toBe(false);
    finishRun();
    await closing;
    await second.whenLeader();
    await second.leave();
  });

  it("joinElection's term signal tells a suspended connection from an expired session", async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const path = lockPath('election');
    const election = joinElection(client, path, { id: 'a' });
    await election.joined;
    const signal = await election.whenLeader();
    proxy.cut();
    await vi.waitUntil(() => signal.aborted);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(signal.reason).toMatchObject({ reason: 'suspended' });
    // Back on the same session, it stands again and leads again.
    const next = await election.whenLeader();
    expect(next.aborted).toBe(false);
    await election.leave();
  });

  it('rejects bad input before creating anything', async () => {
    const client = await connectedClient();
    const before = await client.promises.children('/');
    const errors: unknown[] = [];
    leadership(client, 'no-slash').subscribe({ error: (error: unknown) => errors.push(error) });
    leadership(client, '/ok', { id: '' }).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    whileLeader(client, '/ok', 42 as never).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    watchLeader(client, '/a//b').subscribe({ error: (error: unknown) => errors.push(error) });
    expect(() => joinElection(client, '/ok', { onSuspended: 'maybe' as never })).toThrow(
      expect.objectContaining({ code: 'BadArguments' }),
    );
    expect(errors.map((error) => (error as { code: string }).code)).toEqual([
      'InvalidPath',
      'BadArguments',
      'BadArguments',
      'InvalidPath',
    ]);
    expect(await client.promises.children('/')).toEqual(before);
  });
});
