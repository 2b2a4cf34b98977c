/**
 * The nemesis: a seeded plan of faults (which, when, on whom, for how long — the same plan for
 * the same seed), and the executor that applies them to the workers' proxies, the ensemble and
 * the workers themselves, alone and overlapping, then heals everything.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Ensemble, type EnsembleServer, expireSession, type TcpProxy } from '@zkrx/testing';
import type { FaultKind, FaultRecord } from './history';
import type { CoordinatorMessage } from './protocol';
import { createRandom } from './random';

/** One planned fault. Times in ms from the start of the fault phase. */
export interface PlannedFault {
  readonly id: number;
  readonly at: number;
  readonly kind: FaultKind;
  /** The worker it aims at (worker faults); undefined for server faults and idle gaps. */
  readonly target: number | undefined;
  readonly durationMs: number;
  /** Make the target's next hold a long one and strike as it begins (waits a while). */
  readonly whileHolding: boolean;
  /** Strike the next worker to acquire, at once (a fresh hold), not `target`. */
  readonly strikeHolder?: boolean;
  /** Idle gap: each worker's delay before it starts again (ms). */
  readonly resumeDelays?: readonly number[];
}

export interface PlanOptions {
  readonly seed: number;
  /** How long the fault phase lasts (ms); no fault starts after `durationMs - quietTailMs`. */
  readonly durationMs: number;
  readonly quietTailMs: number;
  readonly workers: number;
  readonly sessionTimeoutMs: number;
  /** Mean time between two fault starts (ms). */
  readonly meanGapMs: number;
  /** How long an idle gap waits for ZooKeeper to reap the lock paths (ms). */
  readonly reapWaitMs: number;
  /** Relative weights of the kinds; a kind with weight 0 (or absent) never comes. */
  readonly weights: Partial<Record<FaultKind, number>>;
  /** Start with one fault of each kind of positive weight, in a seeded order. */
  readonly coverEveryKind: boolean;
  /** Workers that cannot be stalled (a Curator worker's JVM is not its Node process). */
  readonly unstallable?: readonly number[];
  /** Every worker fault strikes the current holder (the positive controls). */
  readonly strikeHolder?: boolean;
}

const WORKER_FAULTS: readonly FaultKind[] = ['expire', 'cut', 'reply-lost', 'blackhole', 'stall'];
const SERVER_FAULTS: readonly FaultKind[] = [
  'server-restart',
  'leader-stop',
  'quorum-loss',
  'reconfig',
];

/** Whether a fault kind aims at one worker. */
export function isWorkerFault(kind: FaultKind): boolean {
  return WORKER_FAULTS.includes(kind);
}

/**
 * Plans the faults of a run from its seed: exponential gaps, seeded kinds, targets and
 * durations. Server faults never overlap each other (one is healed before the next starts),
 * nor do idle gaps; everything else may overlap.
 *
 * @param options The seed, the run's shape and the weights.
 * @return The faults in start order.
 */
export function planFaults(options: PlanOptions): PlannedFault[] {
  const random = createRandom(options.seed, 'nemesis');
  const session = options.sessionTimeoutMs;
  const kinds = (Object.keys(options.weights) as FaultKind[]).filter(
    (kind) => (options.weights[kind] ?? 0) > 0,
  );
  if (kinds.length === 0) return [];
  const weights = Object.fromEntries(kinds.map((kind) => [kind, options.weights[kind] ?? 0]));
  const stallable = Array.from({ length: options.workers }, (_, index) => index).filter(
    (index) => !options.unstallable?.includes(index),
  );
  const first = options.coverEveryKind ? shuffle(kinds, random) : [];
  const faults: PlannedFault[] = [];
  let at = random.between(0.2, 1) * options.meanGapMs;
  let serverBusyUntil = 0;
  let idleBusyUntil = 0;
  const last = options.durationMs - options.quietTailMs;
  while (at < last) {
    const kind = first.shift() ?? (random.weighted(weights) as FaultKind);
    const duration = durationOf(kind, session, options.reapWaitMs, random);
    let start = at;
    if (SERVER_FAULTS.includes(kind)) start = Math.max(start, serverBusyUntil);
    if (kind === 'idle-gap') start = Math.max(start, idleBusyUntil);
    if (kind === 'stall' && stallable.length === 0) {
      at += random.between(0.3, 1.7) * options.meanGapMs;
      continue;
    }
    const target = isWorkerFault(kind)
      ? random.pick(
          kind === 'stall' ? stallable : Array.from({ length: options.workers }, (_, i) => i),
        )
      : undefined;
    const whileHolding = isWorkerFault(kind) && random.chance(0.75);
    const resumeDelays =
      kind === 'idle-gap'
        ? Array.from({ length: options.workers }, () => Math.round(random.between(0, 60)))
        : undefined;
    if (start < last) {
      faults.push({
        id: faults.length + 1,
        at: Math.round(start),
        kind,
        target,
        durationMs: Math.round(duration),
        whileHolding,
        ...(resumeDelays ? { resumeDelays } : {}),
        ...(options.strikeHolder && isWorkerFault(kind) ? { strikeHolder: true } : {}),
      });
      if (SERVER_FAULTS.includes(kind)) serverBusyUntil = start + duration + 2 * session;
      if (kind === 'idle-gap') idleBusyUntil = start + duration + session;
    }
    at += random.between(0.3, 1.7) * options.meanGapMs;
  }
  return faults.sort((a, b) => a.at - b.at);
}

function shuffle<T>(items: readonly T[], random: ReturnType<typeof createRandom>): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = random.int(0, index);
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

function durationOf(
  kind: FaultKind,
  session: number,
  reapWaitMs: number,
  random: ReturnType<typeof createRandom>,
): number {
  switch (kind) {
    case 'expire':
    case 'cut':
      return 0;
    case 'reply-lost':
      return random.between(50, Math.min(400, session / 3));
    case 'blackhole':
      // Well over the session timeout: the session expires behind it.
      return session * random.between(1.5, 2.2);
    case 'server-restart':
    case 'leader-stop':
      return session * random.between(0.2, 1.5);
    case 'quorum-loss':
      return session * random.between(0.3, 2);
    case 'reconfig':
      // Not a duration it waits: about what a replacement takes (a join, a drain, a stop).
      return session;
    case 'idle-gap':
      return reapWaitMs;
    case 'stall':
      return session * random.between(0.4, 2);
    case 'boot':
      // The run's own (boot-fleet), never planned.
      return 0;
  }
}

/** What the executor acts on. */
export interface NemesisContext {
  readonly ensemble: Ensemble;
  readonly sessionTimeoutMs: number;
  /** The worker's proxies, one a server, in server order. */
  proxiesOf(worker: number): readonly TcpProxy[];
  /**
   * A server was added (the `reconfig` fault): give every worker a proxy to it, at the server's
   * index, and tell each where its proxy is.
   */
  routeServer(server: EnsembleServer): Promise<void>;
  /** The worker's current session credentials, if it has a session. */
  credentials(worker: number): { sessionId: string; password: string } | undefined;
  /** Resolves true at the worker's next acquisition (false after `timeoutMs`). */
  untilNextHold(worker: number, timeoutMs: number): Promise<boolean>;
  /** Resolves the next worker to acquire something (undefined after `timeoutMs`). */
  nextHolder(timeoutMs: number): Promise<number | undefined>;
  /**
   * The worker a worker fault planned for `worker` strikes, as it starts (default: `worker`). The
   * fleet mode moves it to a member that owns items when `worker` owns none.
   */
  retarget?(worker: number): number;
  send(worker: number, message: CoordinatorMessage): void;
  /** Tells every worker to go idle; resolves once all are (or after a while). */
  idleAll(): Promise<void>;
  /** The coordinator's clock. */
  now(): number;
  /** Records an applied fault (stalls are recorded when the worker reports them). */
  record(fault: FaultRecord): void;
  log(text: string): void;
}

/**
 * Applies a plan: each fault at its time, concurrently; `heal()` then undoes whatever is still
 * in effect (paused proxies, stopped servers) and waits for a leader.
 */
export class Nemesis {
  private readonly running = new Set<Promise<void>>();
  private readonly down = new Set<number>();
  private serverLock: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Faults applied (or attempted) by kind. */
  readonly applied = new Map<FaultKind, number>();
  readonly failures: string[] = [];

  constructor(private readonly context: NemesisContext) {}

  /**
   * Runs the plan from now on; resolves when every fault has started and ended (or `stop()`).
   *
   * @param plan The faults, in start order.
   */
  async run(plan: readonly PlannedFault[]): Promise<void> {
    const origin = this.context.now();
    for (const fault of plan) {
      const wait = origin + fault.at - this.context.now();
      if (wait > 0) await sleep(wait);
      if (this.stopped) break;
      const task = this.apply(fault).catch((error: unknown) => {
        this.failures.push(`fault #${fault.id} ${fault.kind}: ${describe(error)}`);
      });
      this.running.add(task);
      void task.finally(() => this.running.delete(task));
    }
    await Promise.all(this.running);
  }

  /** Stops starting faults (those in effect finish, then `heal()`). */
  stop(): void {
    this.stopped = true;
  }

  /** Resumes every proxy, starts every stopped server, waits for a leader. */
  async heal(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
    const { ensemble } = this.context;
    for (let worker = 0; ; worker++) {
      const proxies = this.safeProxies(worker);
      if (!proxies) break;
      for (const proxy of proxies) {
        proxy.holdReplies(false);
        if (proxy.paused) proxy.resume();
        proxy.refuse(false);
      }
    }
    await this.withServers(async () => {
      for (const server of ensemble.servers) {
        // A server the reconfig fault replaced is out of the configuration for good.
        if (!server.running && server.inConfiguration) await ensemble.startServer(server.index);
      }
      this.down.clear();
    });
    await ensemble.leaderIndex(60_000);
  }

  private safeProxies(worker: number): readonly TcpProxy[] | undefined {
    try {
      const proxies = this.context.proxiesOf(worker);
      return proxies.length > 0 ? proxies : undefined;
    } catch {
      return undefined;
    }
  }

  /** Server stops and starts one at a time. */
  private withServers<T>(work: () => Promise<T>): Promise<T> {
    const next = this.serverLock.then(work, work);
    this.serverLock = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  private async apply(fault: PlannedFault): Promise<void> {
    const { context } = this;
    this.applied.set(fault.kind, (this.applied.get(fault.kind) ?? 0) + 1);
    const target = fault.strikeHolder
      ? ((await context.nextHolder(30_000)) ?? fault.target)
      : fault.target !== undefined && context.retarget
        ? context.retarget(fault.target)
        : fault.target;
    if (target !== undefined && fault.whileHolding && !fault.strikeHolder) {
      // Its next hold lasts (two session timeouts and the fault): strike as it begins.
      context.send(target, { type: 'linger', ms: 2 * context.sessionTimeoutMs + fault.durationMs });
      const holding = await context.untilNextHold(
        target,
        Math.max(2_000, 2 * context.sessionTimeoutMs),
      );
      // No hold came in time: strike anyway, and take the long hold back. Left set, it fell on
      // whatever hold came next, after the heal too: in a run on 2026-11-27 three of them (6 to
      // 12 s each) queued on one path after the heal kept a worker from acquiring in time.
      if (!holding) context.send(target, { type: 'linger', ms: 0 });
    }
    const base = { id: fault.id, kind: fault.kind, target };
    const note = (detail: string) =>
      context.log(
        `fault #${fault.id} ${fault.kind}${target === undefined ? '' : ` on worker ${target}`}: ${detail}`,
      );
    switch (fault.kind) {
      case 'expire': {
        const credentials = context.credentials(target as number);
        if (!credentials) return note('no session to expire');
        const start = context.now();
        note(`session ${credentials.sessionId}`);
        await expireSession(
          { connectString: context.ensemble.connectString, ...credentials },
          { timeoutMs: 3 * context.sessionTimeoutMs },
        );
        context.record({
          ...base,
          start,
          healedAt: context.now(),
          lossReference: start,
          detail: credentials.sessionId,
        });
        return;
      }
      case 'cut': {
        const start = context.now();
        for (const proxy of context.proxiesOf(target as number)) proxy.cut();
        context.record({
          ...base,
          start,
          healedAt: start,
          lossReference: start,
          detail: 'every connection dropped',
        });
        return note('connections dropped');
      }
      case 'reply-lost': {
        const proxies = context.proxiesOf(target as number);
        const start = context.now();
        for (const proxy of proxies) proxy.holdReplies(true);
        await sleep(fault.durationMs);
        // Drop the connections with the replies held in them, then let new ones through.
        for (const proxy of proxies) proxy.cut();
        for (const proxy of proxies) proxy.holdReplies(false);
        const healedAt = context.now();
        context.record({
          ...base,
          start,
          healedAt,
          lossReference: start,
          detail: `replies held ${fault.durationMs} ms, then cut`,
        });
        return note(`replies held ${fault.durationMs} ms, then cut`);
      }
      case 'blackhole': {
        const proxies = context.proxiesOf(target as number);
        const start = context.now();
        for (const proxy of proxies) proxy.pause();
        note(`${fault.durationMs} ms`);
        await sleep(fault.durationMs);
        for (const proxy of proxies) proxy.resume();
        context.record({
          ...base,
          start,
          healedAt: context.now(),
          lossReference: start,
          detail: `${fault.durationMs} ms`,
        });
        return;
      }
      case 'stall':
        context.send(target as number, { type: 'stall', ms: fault.durationMs, faultId: fault.id });
        return note(`${fault.durationMs} ms, aimed at its next ping while holding`);
      case 'idle-gap': {
        const start = context.now();
        note(`every worker idle, ${fault.durationMs} ms for the reaper`);
        await context.idleAll();
        await sleep(fault.durationMs);
        const delays = fault.resumeDelays ?? [];
        for (let worker = 0; this.safeProxies(worker); worker++) {
          context.send(worker, { type: 'idle', on: false, delayMs: delays[worker] ?? 0 });
        }
        context.record({
          ...base,
          start,
          healedAt: context.now(),
          lossReference: start,
          detail: `${fault.durationMs} ms`,
        });
        return;
      }
      case 'server-restart':
      case 'leader-stop':
      case 'quorum-loss':
        return this.withServers(() => this.serverFault(fault, note));
      case 'reconfig':
        return this.withServers(() => this.replaceServer(fault, note));
    }
  }

  /**
   * The `reconfig` fault: a running member replaced through dynamic reconfiguration — a new
   * server added (`reconfig -add`), the member removed (`reconfig -remove`, the leader among the
   * candidates), and stopped once its clients left it (they follow the configuration) or after
   * the drain.
   */
  private async replaceServer(fault: PlannedFault, note: (detail: string) => void): Promise<void> {
    const { context } = this;
    const { ensemble } = context;
    const members = ensemble.servers
      .filter((server) => server.running && server.inConfiguration)
      .map((server) => server.index);
    const victim = createRandom(fault.id, 'reconfig').pick(members);
    const start = context.now();
    const added = await ensemble.addServer();
    await context.routeServer(added);
    note(`server ${ensemble.servers[victim]!.serverId} to be replaced by ${added.serverId}`);
    // Losses are measured from the removal: the leader's hand-off drops every connection then,
    // and the server is stopped at most a third of a session timeout later (its clients that
    // follow have left it by then; one that has not is cut by the stop).
    const removal = context.now();
    await ensemble.removeServer(victim, { drainTimeoutMs: context.sessionTimeoutMs / 3 });
    await ensemble.leaderIndex(60_000);
    const detail = `server ${ensemble.servers[victim]!.serverId} replaced by ${added.serverId}`;
    note(`${detail} in ${Math.round(context.now() - start)} ms`);
    context.record({
      id: fault.id,
      kind: fault.kind,
      target: undefined,
      start,
      healedAt: context.now(),
      lossReference: removal,
      detail,
    });
    // The next server fault comes two session timeouts after this one's end, as planned for
    // every server fault (a replacement can take longer than planned).
    await sleep(2 * context.sessionTimeoutMs);
  }

  private async serverFault(fault: PlannedFault, note: (detail: string) => void): Promise<void> {
    const { context } = this;
    const { ensemble } = context;
    const running = ensemble.servers
      .filter((server) => server.running && server.inConfiguration)
      .map((server) => server.index);
    let victims: number[];
    if (fault.kind === 'leader-stop') {
      victims = [await ensemble.leaderIndex(10_000)];
    } else if (fault.kind === 'quorum-loss') {
      const leader = await ensemble.leaderIndex(10_000);
      const follower = running.find((index) => index !== leader);
      victims = follower === undefined ? [leader] : [leader, follower];
    } else {
      // The server a random worker is connected to (its proxy with a connection), else any.
      const random = createRandom(fault.id, 'server-restart');
      const connected = new Set<number>();
      for (let worker = 0; this.safeProxies(worker); worker++) {
        this.context.proxiesOf(worker).forEach((proxy, index) => {
          if (proxy.connections > 0) connected.add(index);
        });
      }
      const choices = running.filter((index) => connected.size === 0 || connected.has(index));
      victims = [random.pick(choices.length > 0 ? choices : running)];
    }
    const start = context.now();
    await Promise.all(victims.map((index) => ensemble.stopServer(index)));
    for (const index of victims) this.down.add(index);
    note(
      `server${victims.length > 1 ? 's' : ''} ${victims.map((index) => index + 1).join(' and ')} down for ${fault.durationMs} ms`,
    );
    await sleep(fault.durationMs);
    for (const index of victims) {
      await ensemble.startServer(index);
      this.down.delete(index);
    }
    await ensemble.leaderIndex(60_000);
    context.record({
      id: fault.id,
      kind: fault.kind,
      target: undefined,
      start,
      healedAt: context.now(),
      lossReference: start,
      detail: `server${victims.length > 1 ? 's' : ''} ${victims.map((index) => index + 1).join('+')} ${fault.durationMs} ms`,
    });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
