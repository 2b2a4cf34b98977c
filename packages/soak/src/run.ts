/**
 * One soak run of one mode: a fresh 3-server ensemble, the worker processes behind their own
 * fault proxies, the nemesis, the heal, the progress check, the stop, then ZooKeeper's
 * transaction log read back and the checker's verdict.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type ZkClient } from '@zkrx/core';
import { type Ensemble, startEnsemble, startProxy, type TcpProxy } from '@zkrx/testing';
import { type CheckInput, type CheckReport, check } from './checker';
import { mono, WorkerClock, wallClockOffset } from './clock';
import { forkWorker, type WorkerProcess } from './fleet';
import { type CheckedHold, FAULT_KINDS, type FaultKind, type FaultRecord } from './history';
import { Nemesis, type PlannedFault, planFaults } from './nemesis';
import { type FleetHistory, UNOWNED_GRACE_MS } from './partition-check';
import { type FleetChange, planFleet } from './partition-plan';
import type {
  CoordinatorMessage,
  HoldProfile,
  HoldStart,
  WorkerConfig,
  WorkerCounters,
  WorkerMessage,
  WorkerMode,
} from './protocol';
import { hash32 } from './random';
import { lostToReconfig } from './reconfig-losses';
import { FencedRegister } from './register';
import { buildTruth } from './truth';
import { readQuorumLog } from './txn-log';
import { type Latency, latencyOf } from './verdict';

/**
 * What `pnpm soak` can run; `broken`, `deaf`, `broken-fleet`, `slow-fleet` and `stale-fleet` are
 * the positive controls; `deploy-fleet` and `boot-fleet` are fleet modes outside the default run.
 */
export type SoakMode =
  | 'mutex'
  | 'one-client'
  | 'rwlock'
  | 'semaphore'
  | 'multi-lock'
  | 'leader'
  | 'mixed'
  | 'broken'
  | 'continue'
  | 'deaf'
  | 'fleet'
  | 'broken-fleet'
  | 'slow-fleet'
  | 'deploy-fleet'
  | 'boot-fleet'
  | 'stale-fleet';

export const DEFAULT_MODES: readonly SoakMode[] = [
  'mutex',
  'one-client',
  'rwlock',
  'semaphore',
  'multi-lock',
  'leader',
  'mixed',
  'continue',
  'fleet',
];
export const CONTROL_MODES: readonly SoakMode[] = [
  'broken',
  'deaf',
  'broken-fleet',
  'slow-fleet',
  'stale-fleet',
];
/** Fleet modes run on request only: a rolling deploy, a boot before ZooKeeper. */
export const EXTRA_MODES: readonly SoakMode[] = ['deploy-fleet', 'boot-fleet'];

/** Fleet modes: the workers are members of one `@zkrx/fleet` partition. */
export const isFleetMode = (mode: SoakMode) =>
  mode === 'fleet' ||
  mode === 'broken-fleet' ||
  mode === 'slow-fleet' ||
  mode === 'deploy-fleet' ||
  mode === 'boot-fleet' ||
  mode === 'stale-fleet';

/** The share of the items a rolling deploy replaces (`deploy-fleet`, `stale-fleet`). */
const DEPLOY_CHANGE = 0.03;
/** `boot-fleet`: the workers' connect timeout, and how long the servers stay down (ms). */
const BOOT_CONNECT_TIMEOUT_MS = 1_000;
const BOOT_DOWN_MS = 8_000;

export interface ModeOptions {
  readonly mode: SoakMode;
  readonly seed: number;
  readonly workers: number;
  readonly sessionTimeoutMs: number;
  /** How long faults are injected (ms); the run then heals and checks progress. */
  readonly faultPhaseMs: number;
  /** Mean time between two fault starts (ms). */
  readonly meanFaultGapMs: number;
  /** Start with one fault of each kind. */
  readonly coverEveryKind: boolean;
  /** Fault weights (defaults: every kind). */
  readonly weights?: Partial<Record<FaultKind, number>>;
  /** Every worker fault strikes the current holder (default: the mode's choice). */
  readonly strikeHolder?: boolean;
  /** ZooKeeper's container check interval (ms): idle lock paths are reaped this fast. */
  readonly reapIntervalMs: number;
  /** Acquisitions each worker must make after the heal. */
  readonly progressAcquisitions: number;
  /** How long the run waits for them (ms). */
  readonly progressTimeoutMs: number;
  /** A progress line every this many ms (0: none). */
  readonly progressEveryMs: number;
  /** Where progress lines go (stderr). */
  readonly progress?: (line: string) => void;
  /** Where the nemesis' notes go (verbose). */
  readonly log?: (line: string) => void;
  /** Given the checker's whole input (the history and ZooKeeper's record), before the verdict. */
  readonly history?: (input: CheckInput) => void;
  /**
   * Fleet modes: how long a quiet period (no fault, no change) must last for the checker to judge
   * balance at its end (default: the session timeout, at least 2 s).
   */
  readonly settleMs?: number;
  /** Fleet modes: changes made alone in each calm (default 4). */
  readonly calmChanges?: number;
  /** Fleet modes: the first item set's size (default 3 a worker). */
  readonly fleetItems?: number;
}

/** What a mode's run found. */
export interface ModeReport {
  readonly mode: SoakMode;
  readonly seed: number;
  readonly workers: number;
  readonly sessionTimeoutMs: number;
  readonly durationMs: number;
  readonly acquisitions: number;
  readonly attemptsFailed: number;
  readonly faults: Partial<Record<FaultKind, number>>;
  /** Of the stalls, those that struck right after a ping was written (the others: the bound). */
  readonly stallsAfterPing: number;
  /**
   * Workers' sessions the server expired during a `reconfig` fault (from its start to a session
   * timeout after it ended) with no `expire` fault on that worker around: what it must not do.
   */
  readonly sessionsLostToReconfig: number;
  readonly check: CheckReport;
  /** Heal of each fault → the next acquisition (of its worker; of anyone for server faults). */
  readonly recovery: Partial<Record<FaultKind, Latency>>;
  /** Final heal → each worker's next acquisition. */
  readonly finalRecovery: Latency;
  readonly releaseMs: Latency;
  /** LockTimeoutError: how much later than its timeoutMs it came. */
  readonly timeoutOvershootMs: Latency;
  readonly lossReasons: Record<string, number>;
  readonly failureReasons: Record<string, number>;
  readonly containersReaped: number;
  readonly sessionsClosed: number;
  readonly unconfirmedTxns: number;
  readonly clock: { maxAbsOffsetMs: number; worstBestRttMs: number };
  readonly nemesisFailures: readonly string[];
  readonly notes: readonly string[];
}

const SHORT_PROFILE: HoldProfile = {
  writesMax: 3,
  workMsMax: 4,
  longHoldChance: 0.015,
  longHoldMs: 1_200,
  thinkMsMax: 20,
  timeoutChance: 0.25,
};

interface ModeShape {
  readonly workerModes: (index: number) => WorkerMode;
  readonly resources: (root: string) => string[];
  readonly leases: number;
  readonly multiCount: number;
  readonly onSuspended: 'release' | 'continue';
  readonly profile: HoldProfile;
  readonly weights: Partial<Record<FaultKind, number>>;
  readonly strikeHolder?: boolean;
  /** `broken-fleet`: how long a member believes on in an item it gave up (ms). */
  readonly lateMs?: number;
  /** `slow-fleet`: how long after it is given an item a member begins to own it (ms). */
  readonly slowMs?: number;
  /** `deploy-fleet`, `stale-fleet`: a rolling deploy after the rounds. */
  readonly deploy?: boolean;
  /** `stale-fleet`: the deploy's first replacement ignores the deploy's set. */
  readonly stale?: boolean;
  /** `boot-fleet`: every server down while the fleet joins, this long (ms). */
  readonly bootDownMs?: number;
}

const EVERY_FAULT: Partial<Record<FaultKind, number>> = {
  expire: 2,
  cut: 2,
  'reply-lost': 2,
  blackhole: 2,
  'server-restart': 1,
  'leader-stop': 1,
  'quorum-loss': 1,
  reconfig: 1,
  'idle-gap': 1.5,
  stall: 2,
};

/** The fleet mode's faults: every kind but the idle gap (a member holds its items while idle). */
const FLEET_FAULTS: Partial<Record<FaultKind, number>> = { ...EVERY_FAULT, 'idle-gap': 0 };

const paths = (root: string, prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${root}/${prefix}-${index}`);

function shapeOf(mode: SoakMode, sessionTimeoutMs: number): ModeShape {
  const base = {
    leases: 1,
    multiCount: 2,
    onSuspended: 'release' as const,
    profile: SHORT_PROFILE,
    weights: EVERY_FAULT,
  };
  switch (mode) {
    case 'mutex':
      // One hot path (contention) and quiet ones the reaper removes between uses.
      return {
        ...base,
        workerModes: () => 'mutex',
        resources: (root) => [
          ...paths(root, 'hot', 1),
          ...paths(root, 'hot', 1),
          ...paths(root, 'quiet', 5),
        ],
      };
    case 'one-client':
      // Each worker's waiters share its one client: they queue behind each other on the hot
      // paths (one hand-off per transaction, no watch) and behind other workers' nodes.
      // Holds long enough for queues to form, and many short deadlines: waiters of one client
      // give up right behind each other (a node that only waited hands nothing over).
      return {
        ...base,
        workerModes: () => 'one-client',
        resources: (root) => [...paths(root, 'hot', 2), ...paths(root, 'quiet', 2)],
        profile: {
          ...SHORT_PROFILE,
          workMsMax: 15,
          longHoldChance: 0.03,
          timeoutChance: 0.4,
          timeoutMs: [20, 600],
        },
      };
    case 'rwlock':
      return { ...base, workerModes: () => 'rwlock', resources: (root) => paths(root, 'rw', 3) };
    case 'semaphore':
      return {
        ...base,
        leases: 3,
        workerModes: () => 'semaphore',
        resources: (root) => paths(root, 'sem', 2),
      };
    case 'multi-lock':
      return {
        ...base,
        multiCount: 3,
        workerModes: () => 'multi-lock',
        resources: (root) => paths(root, 'multi', 5),
      };
    case 'leader':
      return {
        ...base,
        workerModes: () => 'leader',
        resources: (root) => [`${root}/elect`, `${root}/select`],
      };
    case 'mixed':
      return {
        ...base,
        workerModes: (index) => (index === 0 ? 'curator' : 'mutex'),
        resources: (root) => paths(root, 'shared', 2),
        // Curator's EnsembleTracker would follow the configuration past the worker's proxies
        // (it has no address map): no reconfiguration here, the proxies' faults keep striking it.
        weights: { ...EVERY_FAULT, reconfig: 0 },
      };
    case 'broken':
      return {
        ...base,
        workerModes: () => 'broken',
        resources: (root) => paths(root, 'broken', 1),
        profile: {
          ...SHORT_PROFILE,
          writesMax: 3,
          workMsMax: 10,
          longHoldChance: 0,
          timeoutChance: 0,
        },
        weights: {},
      };
    case 'continue':
      // A lease kept through suspensions: it must still let go before the servers could
      // expire its session, timed from what they last heard — under blackholes and cuts on
      // the holder, and stalls of its process, with holds long enough to outlive a session.
      return {
        ...base,
        onSuspended: 'continue',
        workerModes: () => 'mutex',
        resources: (root) => paths(root, 'continue', 2),
        // Three quarters of the faults on a worker make its next hold long enough to outlive
        // the session had the lease not let go, and strike as it begins.
        weights: { blackhole: 3, stall: 2, cut: 1, 'reply-lost': 1 },
      };
    case 'deaf':
      // Positive control: a holder that hears of its loss a session timeout late, behind
      // blackholes struck as its long holds begin — it outlives its node.
      return {
        ...base,
        workerModes: () => 'deaf',
        resources: (root) => paths(root, 'deaf', 1),
        profile: {
          ...SHORT_PROFILE,
          longHoldChance: 1,
          longHoldMs: 2.5 * sessionTimeoutMs,
          timeoutChance: 0,
        },
        weights: { blackhole: 1 },
        strikeHolder: true,
      };
    case 'fleet':
      // Members of one partition; the items' lock paths are under it (partition-plan.ts).
      return {
        ...base,
        workerModes: () => 'fleet',
        resources: () => [],
        weights: FLEET_FAULTS,
      };
    case 'broken-fleet':
      // A member that believes on in each item half a second after giving it up; churn only.
      return {
        ...base,
        workerModes: () => 'broken-fleet',
        resources: () => [],
        weights: {},
        lateMs: 500,
      };
    case 'slow-fleet':
      // A member that begins to work on each item 3 session timeouts + 5 s after it holds it:
      // never owned twice, but items unowned past `unowned`'s bound; churn only.
      return {
        ...base,
        workerModes: () => 'slow-fleet',
        resources: () => [],
        weights: {},
        slowMs: 3 * sessionTimeoutMs + 5_000,
      };
    case 'deploy-fleet':
      // The fleet's rounds (faults and churn), then a rolling deploy that changes the set.
      return {
        ...base,
        workerModes: () => 'fleet',
        resources: () => [],
        weights: FLEET_FAULTS,
        deploy: true,
      };
    case 'stale-fleet':
      // Positive control: the rolling deploy's first replacement states the old set (it owns
      // items it was not told to list while the others are replaced: `item-sets`); churn only.
      return {
        ...base,
        workerModes: () => 'stale-fleet',
        resources: () => [],
        weights: {},
        deploy: true,
        stale: true,
      };
    case 'boot-fleet':
      // Every server down before the first joins, for several connect timeouts; then the rounds.
      return {
        ...base,
        workerModes: () => 'fleet',
        resources: () => [],
        weights: FLEET_FAULTS,
        bootDownMs: BOOT_DOWN_MS,
      };
  }
}

/** Live state of a run, fed by the workers' messages. */
class RunState {
  readonly holds = new Map<
    string,
    HoldStart & {
      worker: number;
      ended?: { at: number; how: 'released' | 'lost'; reason?: string; onArrival?: boolean };
    }
  >();
  readonly openHolds = new Map<number, Set<string>>();
  readonly credentials = new Map<number, { sessionId: string; password: string }>();
  readonly clocks = new Map<number, WorkerClock>();
  readonly register = new FencedRegister();
  readonly faults: FaultRecord[] = [];
  readonly crashes: string[] = [];
  readonly counters = new Map<number, WorkerCounters>();
  readonly releaseMs: number[] = [];
  readonly timeoutOvershoot: number[] = [];
  readonly lossReasons: Record<string, number> = {};
  readonly failureReasons: Record<string, number> = {};
  readonly notes: string[] = [];
  readonly idleAcks = new Set<number>();
  /** Workers that answered `disarm` (fleet modes). */
  readonly disarmed = new Set<number>();
  readonly pings = new Map<string, number>();
  acquisitions = 0;
  /** How many workers the run has. */
  workerCount = 0;
  /** Stalls that struck right after the worker's client wrote a ping. */
  stallsAfterPing = 0;
  /** When each worker's session was reported expired (coordinator time). */
  readonly expiries: Array<{ worker: number; at: number }> = [];
  /** Acquisitions per worker (coordinator time of each). */
  readonly acquiredAt = new Map<number, number[]>();
  private readonly holdWaiters = new Map<number, (() => void)[]>();

  clock(worker: number): WorkerClock {
    const clock = this.clocks.get(worker) ?? new WorkerClock();
    this.clocks.set(worker, clock);
    return clock;
  }

  toCoordinator(worker: number, at: number): number {
    return this.clock(worker).toCoordinator(at);
  }

  isHolding(worker: number): boolean {
    return (this.openHolds.get(worker)?.size ?? 0) > 0;
  }

  /** Resolves true at the worker's next acquisition (false after `timeoutMs`). */
  untilNextHold(worker: number, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      const list = this.holdWaiters.get(worker) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
      this.holdWaiters.set(worker, list);
    });
  }

  private readonly acquireWaiters: ((worker: number) => void)[] = [];

  /** The next worker to acquire (undefined after `timeoutMs`). */
  nextHolder(timeoutMs: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      this.acquireWaiters.push((worker) => {
        clearTimeout(timer);
        resolve(worker);
      });
    });
  }

  onAcquired(worker: number, start: HoldStart): void {
    for (const waiter of this.acquireWaiters.splice(0)) waiter(worker);
    this.holds.set(start.holdId, { ...start, worker });
    const open = this.openHolds.get(worker) ?? new Set<string>();
    this.openHolds.set(worker, open);
    open.add(start.holdId);
    const waiters = this.holdWaiters.get(worker);
    this.holdWaiters.delete(worker);
    for (const waiter of waiters ?? []) waiter();
  }
}

/** A rolling deploy's replacement: from the old member's leave to the new one's join (ms). */
const REPLACE_GAP_MS = 300;

/** A fleet worker's member id. */
const memberId = (worker: number) => `member-${worker}`;

/**
 * The coordinator's side of a fleet mode: sends the joins, leaves and item sets, records when
 * (the checker's `FleetHistory`), and tells from the holds in progress whether the fleet has
 * converged (every item owned once, by a member, balanced).
 */
class FleetDriver {
  /** Workers told to join and not told to leave since. */
  readonly subscribed = new Set<number>();
  items: readonly string[];
  /** Workers told a set of their own since the last set given to all (a rolling deploy). */
  private readonly own = new Map<number, readonly string[]>();
  private readonly itemSets: { at: number; items: readonly string[]; worker?: number }[] = [];
  private readonly commands: { at: number; worker: number; kind: 'join' | 'leave' }[] = [];

  constructor(
    readonly path: string,
    initialItems: readonly string[],
    private readonly state: RunState,
    private readonly send: (worker: number, message: CoordinatorMessage) => void,
    private readonly log: (line: string) => void,
  ) {
    this.items = initialItems;
  }

  /** The fleet begins: the workers were given the first item set (their configuration). */
  begin(members: readonly number[]): void {
    this.itemSets.push({ at: mono(), items: this.items });
    for (const worker of members) this.apply({ kind: 'join', worker });
  }

  apply(change: FleetChange): void {
    const at = mono();
    if (change.kind === 'items') {
      this.items = change.items;
      this.own.clear();
      this.itemSets.push({ at, items: change.items });
      for (let worker = 0; worker < this.state.workerCount; worker++) {
        this.send(worker, { type: 'items', items: change.items });
      }
      this.log(`items: ${change.items.length} (${change.items.join(',')})`);
      return;
    }
    if (change.kind === 'join') this.subscribed.add(change.worker);
    else this.subscribed.delete(change.worker);
    this.commands.push({ at, worker: change.worker, kind: change.kind });
    this.send(change.worker, { type: change.kind });
    this.log(
      `${change.kind} of worker ${change.worker}: members ${[...this.subscribed].join(',')}`,
    );
  }

  /**
   * A rolling deploy's step: `worker` replaced by one that states `items` (a member leaves, is
   * given the set, and joins again a moment later, as a restarted process would; a worker out of
   * the fleet is given the set and joins: the new version runs everywhere).
   */
  async replace(worker: number, items: readonly string[]): Promise<void> {
    if (this.subscribed.has(worker)) {
      this.apply({ kind: 'leave', worker });
      await sleep(REPLACE_GAP_MS);
    }
    this.own.set(worker, items);
    this.itemSets.push({ at: mono(), items, worker });
    this.send(worker, { type: 'items', items, deploy: true });
    this.log(`worker ${worker} replaced: ${items.length} items`);
    this.apply({ kind: 'join', worker });
  }

  /** What `worker` was last told to list. */
  setOf(worker: number): readonly string[] {
    return this.own.get(worker) ?? this.items;
  }

  /** Undefined once the fleet has converged; else what is off. */
  unconverged(): string | undefined {
    const prefix = `${this.path}/items/`;
    const owners = new Map<string, number>();
    const counts = new Map<number, number>();
    for (const [worker, open] of this.state.openHolds) {
      for (const holdId of open) {
        const hold = this.state.holds.get(holdId);
        if (!hold?.resource.startsWith(prefix)) continue;
        const item = hold.resource.slice(prefix.length);
        const other = owners.get(item);
        if (other !== undefined) return `${item} owned by workers ${other} and ${worker}`;
        owners.set(item, worker);
        counts.set(worker, (counts.get(worker) ?? 0) + 1);
      }
    }
    const members = this.subscribed.size;
    const sets = [...this.subscribed].map((worker) => this.setOf(worker));
    if (new Set(sets.map((set) => set.join('\u0000'))).size > 1) {
      // Members told different sets: each listed item owned by one that lists it, nothing else.
      const listed = new Set(sets.flat());
      const unowned = [...listed].filter((item) => !owners.has(item));
      if (unowned.length > 0) return `${unowned.length} listed items owned by no one`;
      for (const [item, worker] of owners) {
        if (!this.subscribed.has(worker) || !this.setOf(worker).includes(item)) {
          return `worker ${worker} owns ${item}, which it does not list`;
        }
      }
      return undefined;
    }
    const items = sets[0] ?? this.items;
    const unowned = items.filter((item) => !owners.has(item));
    if (unowned.length > 0) return `${unowned.length} items owned by no one (${unowned.join(',')})`;
    if (members === 0) return 'no member';
    const listed = new Set(items);
    for (const [item, worker] of owners) {
      if (!listed.has(item)) return `worker ${worker} owns ${item}, not in the set`;
    }
    const base = Math.floor(items.length / members);
    const most = base + (items.length % members === 0 ? 0 : 1);
    for (const [worker, owned] of counts) {
      if (!this.subscribed.has(worker)) return `worker ${worker} owns ${owned} and is no member`;
    }
    for (const worker of this.subscribed) {
      const owned = counts.get(worker) ?? 0;
      if (owned < base || owned > most) {
        return `worker ${worker} owns ${owned} of ${items.length} items (${members} members)`;
      }
    }
    return undefined;
  }

  history(settleMs: number, endAt: number): FleetHistory {
    return {
      path: this.path,
      settleMs,
      itemSets: this.itemSets,
      commands: this.commands,
      endAt,
    };
  }
}

function count(record: Record<string, number>, key: string): void {
  record[key] = (record[key] ?? 0) + 1;
}

/**
 * Runs one mode against a fresh ensemble and checks it.
 *
 * @param options The mode, seed, fleet and timings.
 * @return The report (violations and figures).
 */
export async function runMode(options: ModeOptions): Promise<ModeReport> {
  const shape = shapeOf(options.mode, options.sessionTimeoutMs);
  const session = options.sessionTimeoutMs;
  const started = mono();
  const progress = options.progress ?? (() => {});
  const log = options.log ?? (() => {});
  const state = new RunState();
  state.workerCount = options.workers;
  const root = `/soak-${options.mode}-${randomBytes(4).toString('hex')}`;
  const resources = shape.resources(root);
  const nemesisFailures: string[] = [];
  // Fleet modes: the partition's churn plan, and the coordinator's record of what it asked.
  const settleMs = options.settleMs ?? Math.max(2_000, session);
  const fleetPlan = isFleetMode(options.mode)
    ? planFleet({
        seed: hash32(`${options.seed}:${options.mode}:fleet`),
        workers: options.workers,
        items: options.fleetItems ?? 3 * options.workers,
        durationMs: options.faultPhaseMs,
        // The checker judges a quiet period of `settleMs`: a second more, for the change's own
        // steps (a join's member node is made after the command).
        quietMs: settleMs + 1_000,
        calmChanges: options.calmChanges ?? 4,
        meanChangeGapMs: options.meanFaultGapMs,
        ...(shape.deploy ? { deployChange: DEPLOY_CHANGE } : {}),
      })
    : undefined;
  const fleet = new FleetDriver(
    `${root}/fleet`,
    fleetPlan?.initialItems ?? [],
    state,
    (worker, message) => workers[worker]?.send(message),
    log,
  );
  const workers: WorkerProcess[] = [];
  const proxies: TcpProxy[][] = [];
  let observer: ZkClient | undefined;
  let ensemble: Ensemble | undefined;
  let ticker: ReturnType<typeof setInterval> | undefined;
  let pinger: ReturnType<typeof setInterval> | undefined;
  const wallOffsets: number[] = [];
  const weights = options.weights ?? shape.weights;
  try {
    ensemble = await startEnsemble({
      size: 3,
      tmpfs: true,
      // The reconfig fault replaces servers: clients follow the configuration (through their
      // proxies, `followEnsemble.address`).
      reconfig: (weights.reconfig ?? 0) > 0,
      systemProperties: {
        'znode.container.checkIntervalMs': String(options.reapIntervalMs),
        // Small log preallocation: the soak reads the logs back.
        'zookeeper.preAllocSize': '1024',
      },
    });
    observer = createClient({ connect: ensemble.connectString, sessionTimeoutMs: 10_000 });
    await observer.connected();
    await observer.promises.mkdirp(root);
    wallOffsets.push(wallClockOffset());

    for (let index = 0; index < options.workers; index++) {
      proxies.push(
        await Promise.all(ensemble.servers.map((server) => startProxy(server.connectString))),
      );
    }

    // ---- the fleet ----
    const ready = new Set<number>();
    const stopped = new Set<number>();
    let everyoneReady: (() => void) | undefined;
    const onMessage = (worker: number, message: WorkerMessage) => {
      const at = (time: number) => state.toCoordinator(worker, time);
      switch (message.type) {
        case 'ready':
          ready.add(worker);
          if (ready.size === options.workers) everyoneReady?.();
          break;
        case 'pong': {
          const sentAt = state.pings.get(`${worker}:${message.id}`);
          state.pings.delete(`${worker}:${message.id}`);
          if (sentAt === undefined) break;
          const receivedAt = mono();
          state.clock(worker).add({
            at: (sentAt + receivedAt) / 2,
            offset: message.at - (sentAt + receivedAt) / 2,
            rtt: receivedAt - sentAt,
          });
          break;
        }
        case 'session':
          if (message.state === 'expired') state.expiries.push({ worker, at: at(message.at) });
          if (message.sessionId && message.password) {
            state.credentials.set(worker, {
              sessionId: message.sessionId,
              password: message.password,
            });
          }
          break;
        case 'acquired': {
          const { type: _, ...start } = message;
          state.onAcquired(worker, start);
          state.acquisitions += 1;
          const list = state.acquiredAt.get(worker) ?? [];
          list.push(at(message.at));
          state.acquiredAt.set(worker, list);
          break;
        }
        case 'ended': {
          const hold = state.holds.get(message.holdId);
          if (hold)
            hold.ended = {
              at: message.at,
              how: message.how,
              ...(message.reason ? { reason: message.reason } : {}),
              ...(message.onArrival ? { onArrival: true } : {}),
            };
          state.openHolds.get(worker)?.delete(message.holdId);
          if (message.how === 'lost') count(state.lossReasons, message.reason ?? 'unknown');
          break;
        }
        case 'release-done':
          state.releaseMs.push(message.ms);
          if (message.error) count(state.failureReasons, `release: ${message.error}`);
          break;
        case 'write': {
          const coordinatorAt = mono();
          const accepted = message.writes.map((write) =>
            state.register.write({ ...write, worker, at: coordinatorAt }),
          );
          workers[worker]?.send({ type: 'write-reply', id: message.id, accepted });
          break;
        }
        case 'attempt-failed':
          count(state.failureReasons, message.error);
          if (message.error.startsWith('LockTimeoutError') && message.timeoutMs !== undefined) {
            state.timeoutOvershoot.push(message.elapsedMs - message.timeoutMs);
          }
          break;
        case 'stalled':
          state.faults.push({
            id: message.faultId,
            kind: 'stall',
            target: worker,
            start: at(message.start),
            healedAt: at(message.end),
            lossReference: at(message.end),
            detail: `${Math.round(message.end - message.start)} ms ${message.struck === 'ping' ? 'right after a ping' : 'at the bound, no ping'}${message.holdIds.length > 0 ? `, holding ${message.holdIds.join(',')}` : ''}`,
          });
          if (message.struck === 'ping') state.stallsAfterPing += 1;
          log(
            `fault #${message.faultId} stall on worker ${worker}: ${Math.round(message.end - message.start)} ms ${message.struck === 'ping' ? 'right after a ping' : 'at the bound, no ping'}, holding ${message.holdIds.join(',') || 'nothing'}`,
          );
          break;
        case 'idle-ack':
          state.idleAcks.add(worker);
          break;
        case 'disarmed':
          state.disarmed.add(worker);
          break;
        case 'note':
          if (message.text !== 'bye') {
            state.notes.push(`worker ${worker} @${Math.round(at(message.at))}: ${message.text}`);
          }
          break;
        case 'fatal':
          state.crashes.push(`worker ${worker}: ${message.error}`);
          break;
        case 'stopped':
          stopped.add(worker);
          state.counters.set(worker, message.counters);
          break;
      }
    };
    const allReady = new Promise<void>((resolve) => {
      everyoneReady = resolve;
    });
    for (let index = 0; index < options.workers; index++) {
      const config: WorkerConfig = {
        index,
        mode: shape.workerModes(index),
        connect: proxies[index]!.map((proxy) => proxy.connectString).join(','),
        routes: Object.fromEntries(
          ensemble.servers.map((server, position) => [
            server.connectString,
            proxies[index]![position]!.connectString,
          ]),
        ),
        directConnect: ensemble.connectString,
        sessionTimeoutMs: session,
        seed: options.seed,
        resources,
        leases: shape.leases,
        multiCount: shape.multiCount,
        onSuspended: shape.onSuspended,
        profile: shape.profile,
        ...(shape.bootDownMs === undefined ? {} : { connectTimeoutMs: BOOT_CONNECT_TIMEOUT_MS }),
        ...(fleetPlan
          ? {
              fleet: {
                path: fleet.path,
                id: memberId(index),
                items: fleetPlan.initialItems,
                ...(shape.stale && fleetPlan.deploy?.order[0] === index ? { stale: true } : {}),
                ...(shape.lateMs === undefined ? {} : { lateMs: shape.lateMs }),
                ...(shape.slowMs === undefined ? {} : { slowMs: shape.slowMs }),
              },
            }
          : {}),
      };
      workers.push(forkWorker(config, (message) => onMessage(index, message)));
    }
    const exitedEarly = Promise.race(
      workers.map((worker) =>
        worker.exited.then(({ code, signal }) => {
          throw new Error(
            `worker ${worker.index} exited while starting (${signal ?? code}): ${worker.stderr()}`,
          );
        }),
      ),
    );
    exitedEarly.catch(() => {});
    await Promise.race([
      allReady,
      exitedEarly,
      sleep(90_000).then(() => Promise.reject(new Error('workers not ready within 90 s'))),
    ]);

    // ---- clocks: ping-pong now and every 2 s ----
    let pingId = 0;
    const pingAll = () => {
      pingId += 1;
      for (const worker of workers) {
        state.pings.set(`${worker.index}:${pingId}`, mono());
        worker.send({ type: 'ping', id: pingId });
      }
    };
    for (let round = 0; round < 5; round++) {
      pingAll();
      await sleep(20);
    }
    pinger = setInterval(() => {
      pingAll();
      if (pingId % 5 === 0) wallOffsets.push(wallClockOffset());
    }, 2_000);

    // ---- the fault phase ----
    // Fleet modes: the faults come in the storms of the fleet's plan, one after the other.
    const stormMs = fleetPlan?.rounds[0]?.stormMs ?? 0;
    const faultTimeMs = fleetPlan
      ? fleetPlan.rounds.reduce((sum, round) => sum + round.stormMs, 0)
      : options.faultPhaseMs;
    const plan = planFaults({
      // Each mode its own plan, all from the one seed printed at the start.
      seed: hash32(`${options.seed}:${options.mode}`),
      durationMs: faultTimeMs,
      quietTailMs: fleetPlan
        ? Math.min(stormMs / 4, session)
        : Math.min(options.faultPhaseMs / 4, 2 * session),
      workers: options.workers,
      sessionTimeoutMs: session,
      // A fleet's storms take half its time: faults come twice as often in them.
      meanGapMs: fleetPlan ? options.meanFaultGapMs / 2 : options.meanFaultGapMs,
      reapWaitMs: 3 * options.reapIntervalMs + 400,
      weights,
      coverEveryKind: options.coverEveryKind,
      strikeHolder: options.strikeHolder ?? shape.strikeHolder ?? false,
      unstallable: Array.from({ length: options.workers }, (_, index) => index).filter(
        (index) => shape.workerModes(index) === 'curator',
      ),
    });
    const makeNemesis = () =>
      new Nemesis({
        ensemble: ensemble as Ensemble,
        sessionTimeoutMs: session,
        proxiesOf: (worker) => {
          const list = proxies[worker];
          if (!list) throw new RangeError(`no worker ${worker}`);
          return list;
        },
        routeServer: async (server) => {
          for (const [worker, list] of proxies.entries()) {
            const proxy = await startProxy(server.connectString);
            list[server.index] = proxy;
            workers[worker]?.send({
              type: 'routes',
              routes: { [server.connectString]: proxy.connectString },
            });
          }
        },
        credentials: (worker) => state.credentials.get(worker),
        // A member holds its items until they move: one that owns some now is struck at once.
        untilNextHold: (worker, timeoutMs) =>
          fleetPlan && state.isHolding(worker)
            ? Promise.resolve(true)
            : state.untilNextHold(worker, timeoutMs),
        nextHolder: (timeoutMs) => state.nextHolder(timeoutMs),
        // A fleet worker that owns nothing (out of the fleet, or between items) has nothing to
        // lose: the fault goes to the next worker, in index order, that owns items now.
        ...(fleetPlan
          ? {
              retarget: (worker: number) => {
                for (let step = 0; step < options.workers; step++) {
                  const candidate = (worker + step) % options.workers;
                  if (state.isHolding(candidate)) return candidate;
                }
                return worker;
              },
            }
          : {}),
        send: (worker, message) => workers[worker]?.send(message),
        idleAll: async () => {
          state.idleAcks.clear();
          for (const worker of workers) worker.send({ type: 'idle', on: true });
          const deadline = mono() + 4 * session;
          while (state.idleAcks.size < workers.length && mono() < deadline) await sleep(10);
        },
        now: mono,
        record: (fault) => state.faults.push(fault),
        log,
      });
    const faultStart = mono();
    for (const worker of workers) worker.send({ type: 'start' });
    let lastCount = 0;
    if (options.progressEveryMs > 0) {
      ticker = setInterval(() => {
        const elapsed = Math.round((mono() - faultStart) / 1000);
        const holding = workers.filter((worker) => state.isHolding(worker.index)).length;
        progress(
          `[soak ${options.mode} +${elapsed}s] acquisitions ${state.acquisitions} (+${state.acquisitions - lastCount}), faults ${state.faults.length}/${plan.length}, holders now ${holding}, losses ${Object.values(state.lossReasons).reduce((a, b) => a + b, 0)}${fleetPlan ? `, members ${fleet.subscribed.size}, items ${fleet.items.length}` : ''}`,
        );
        lastCount = state.acquisitions;
      }, options.progressEveryMs);
    }
    let healedAt: number;
    let noProgress: string[];
    let finalRecovery: number[];
    if (fleetPlan) {
      // ---- the fleet: storms (faults and changes at once), each followed by a calm ----
      if (shape.bootDownMs !== undefined) {
        // boot-fleet: the fleet subscribes with every server down (a whole stack starting at
        // once), for several connect timeouts; the checker excuses it until they are all up.
        const downAt = mono();
        await Promise.all(ensemble.servers.map((server) => ensemble!.stopServer(server.index)));
        log(`boot: every server down; the fleet joins`);
        fleet.begin(fleetPlan.initialMembers);
        await sleep(shape.bootDownMs);
        await Promise.all(ensemble.servers.map((server) => ensemble!.startServer(server.index)));
        await ensemble.leaderIndex(60_000);
        state.faults.push({
          id: 0,
          kind: 'boot',
          target: undefined,
          start: downAt,
          healedAt: mono(),
          lossReference: downAt,
          detail: `every server down ${shape.bootDownMs} ms while the fleet joined`,
        });
        log(`boot: the servers are up at +${Math.round(mono() - downAt)} ms`);
        // A stretch with nothing else, a second past `unowned`'s bound: judged from the servers'
        // start (the joins' member nodes are the fleet's own work then: partition-check.ts).
        await sleep(session + UNOWNED_GRACE_MS + 1_000);
      } else fleet.begin(fleetPlan.initialMembers);
      let offset = 0;
      for (const round of fleetPlan.rounds) {
        const slice: PlannedFault[] = plan
          .filter((fault) => fault.at >= offset && fault.at < offset + round.stormMs)
          .map((fault) => ({ ...fault, at: fault.at - offset }));
        offset += round.stormMs;
        const nemesis = makeNemesis();
        const stormStart = mono();
        log(`storm: ${slice.length} faults, ${round.storm.length} changes in ${round.stormMs} ms`);
        const running = nemesis.run(slice);
        for (const { at, change } of round.storm) {
          const wait = stormStart + at - mono();
          if (wait > 0) await sleep(wait);
          fleet.apply(change);
        }
        const left = stormStart + round.stormMs - mono();
        if (left > 0) await sleep(left);
        await nemesis.heal();
        await running;
        // A stall waits for its target to hold: one that has not struck must not strike in the
        // calm, and one under way must be over before the calm begins (its worker answers
        // `disarm` once it is).
        state.disarmed.clear();
        for (const worker of workers) worker.send({ type: 'disarm' });
        const disarmDeadline = mono() + 4 * session;
        while (state.disarmed.size < workers.length && mono() < disarmDeadline) await sleep(10);
        nemesisFailures.push(...nemesis.failures);
        log(`calm: ${round.calm.length} changes, ${fleetPlan.quietMs} ms apart`);
        await sleep(fleetPlan.quietMs);
        for (const change of round.calm) {
          fleet.apply(change);
          await sleep(fleetPlan.quietMs);
        }
      }
      if (fleetPlan.deploy) {
        // ---- a rolling deploy: every worker replaced by one with the new set, one at a time ----
        const { items, order } = fleetPlan.deploy;
        log(
          `deploy: ${order.length} workers, one every ${fleetPlan.quietMs} ms, to ${items.length} items`,
        );
        for (const worker of order) {
          await fleet.replace(worker, items);
          await sleep(fleetPlan.quietMs);
        }
      }
      healedAt = mono();
      log(`fleet phase over at +${Math.round(healedAt - faultStart)} ms`);
      // ---- progress: every worker a member, and the fleet converges ----
      for (let worker = 0; worker < options.workers; worker++) {
        if (!fleet.subscribed.has(worker)) fleet.apply({ kind: 'join', worker });
      }
      const lastChangeAt = mono();
      const deadline = healedAt + options.progressTimeoutMs;
      let why = fleet.unconverged();
      while (why !== undefined && mono() < deadline) {
        await sleep(50);
        why = fleet.unconverged();
      }
      const convergedAt = mono();
      noProgress =
        why === undefined
          ? []
          : [
              `the fleet did not converge in the ${options.progressTimeoutMs} ms after the last change, with every worker a member: ${why}`,
            ];
      finalRecovery = why === undefined ? [convergedAt - healedAt] : [];
      // The last quiet period, judged by the checker; long enough, from the last joins on (their
      // member nodes a moment later), for `unowned` to judge a second past its bound.
      const unownedJudged = lastChangeAt + session + UNOWNED_GRACE_MS + 2_000;
      await sleep(Math.max(fleetPlan.quietMs, unownedJudged - mono()));
    } else {
      const nemesis = makeNemesis();
      const running = nemesis.run(plan);
      await Promise.race([running, sleep(options.faultPhaseMs)]);
      await running;
      const remaining = faultStart + options.faultPhaseMs - mono();
      if (remaining > 0) await sleep(remaining);
      await nemesis.heal();
      nemesisFailures.push(...nemesis.failures);
      healedAt = mono();
      log(`healed at +${Math.round(healedAt - faultStart)} ms`);

      // ---- progress after the heal ----
      const after = (worker: number) =>
        (state.acquiredAt.get(worker) ?? []).filter((at) => at > healedAt);
      const progressDeadline = healedAt + options.progressTimeoutMs;
      while (
        workers.some((worker) => after(worker.index).length < options.progressAcquisitions) &&
        mono() < progressDeadline
      ) {
        await sleep(50);
      }
      noProgress = workers
        .filter((worker) => after(worker.index).length === 0)
        .map(
          (worker) =>
            `worker ${worker.index} made no acquisition in the ${options.progressTimeoutMs} ms after the heal`,
        );
      finalRecovery = workers.flatMap((worker) => {
        const first = after(worker.index)[0];
        return first === undefined ? [] : [first - healedAt];
      });
    }

    // ---- stop ----
    const stopAt = mono();
    for (const worker of workers) worker.send({ type: 'stop' });
    const stopDeadline = sleep(Math.max(20_000, 4 * session)).then(() => 'timeout' as const);
    for (const worker of workers) {
      const outcome = await Promise.race([worker.exited, stopDeadline]);
      if (outcome === 'timeout') {
        state.crashes.push(
          `worker ${worker.index} did not stop within ${Math.max(20_000, 4 * session)} ms: ${worker.stderr().slice(-2_000)}`,
        );
        worker.kill();
      } else if (
        outcome.code !== 0 &&
        !state.crashes.some((crash) => crash.startsWith(`worker ${worker.index}:`))
      ) {
        state.crashes.push(
          `worker ${worker.index} exited with ${outcome.signal ?? `code ${outcome.code}`}: ${worker.stderr().slice(-2_000)}`,
        );
      } else if (!stopped.has(worker.index) && outcome.code === 0) {
        state.crashes.push(`worker ${worker.index} exited without reporting`);
      }
    }
    clearInterval(ticker);
    clearInterval(pinger);

    // ---- nothing left behind: only containers the reaper removes ----
    const leftovers = await leftoversUnder(
      observer,
      root,
      Math.max(10_000, 3 * session),
      options.reapIntervalMs,
    );
    await observer.promises.delete(root).catch(() => {});

    // ---- ZooKeeper's record, and the verdict ----
    const { txns, unconfirmed } = readQuorumLog(
      ensemble.servers.map((server) => server.dataDir),
      2,
    );
    const truth = buildTruth(txns, root);
    const wallOffset = median(wallOffsets);
    const holds: CheckedHold[] = [...state.holds.values()].map((hold) => {
      const clock = state.clock(hold.worker);
      return {
        holdId: hold.holdId,
        group: hold.group,
        worker: hold.worker,
        resource: hold.resource,
        kind: hold.kind,
        node: hold.node,
        token: hold.token,
        sessionId: hold.sessionId,
        attemptAt: clock.toCoordinator(hold.attemptAt),
        acquiredAt: clock.toCoordinator(hold.at),
        endedAt: hold.ended ? clock.toCoordinator(hold.ended.at) : undefined,
        end: hold.ended?.how,
        reason: hold.ended?.reason,
        lostOnArrival: hold.ended?.onArrival === true,
        uncertainty: clock.uncertainty(hold.at),
      };
    });
    const input: CheckInput = {
      sessionTimeoutMs: session,
      leases: shape.leases,
      holds,
      writes: state.register.log,
      faults: state.faults,
      truth,
      wallOffset,
      crashes: state.crashes,
      leftovers,
      noProgress,
      ...(fleetPlan ? { fleet: fleet.history(settleMs, stopAt) } : {}),
    };
    options.history?.(input);
    const report = check(input);

    // ---- figures ----
    const recoveryValues = new Map<FaultKind, number[]>();
    const allAcquisitions = [...state.acquiredAt.values()].flat().sort((a, b) => a - b);
    for (const fault of state.faults) {
      if (fault.healedAt === undefined) continue;
      const pool =
        fault.target === undefined ? allAcquisitions : (state.acquiredAt.get(fault.target) ?? []);
      const next = pool.find((at) => at > (fault.healedAt as number));
      if (next === undefined) continue;
      const list = recoveryValues.get(fault.kind) ?? [];
      list.push(next - fault.healedAt);
      recoveryValues.set(fault.kind, list);
    }
    const faults: Partial<Record<FaultKind, number>> = {};
    for (const kind of FAULT_KINDS) {
      const applied = state.faults.filter((fault) => fault.kind === kind).length;
      if (applied > 0) faults[kind] = applied;
    }
    const recovery: Partial<Record<FaultKind, Latency>> = {};
    // A member acquires only when an item moves to it: the fleet's recovery is its convergence
    // at the end of each quiet period (the checker's figure), not the next acquisition.
    if (!fleetPlan) for (const [kind, values] of recoveryValues) recovery[kind] = latencyOf(values);
    const clocks = [...state.clocks.values()].map((clock) => clock.summary());
    return {
      mode: options.mode,
      seed: options.seed,
      workers: options.workers,
      sessionTimeoutMs: session,
      durationMs: Math.round(mono() - started),
      acquisitions: state.acquisitions,
      attemptsFailed: [...state.counters.values()].reduce(
        (sum, counters) => sum + counters.attemptsFailed,
        0,
      ),
      faults,
      stallsAfterPing: state.stallsAfterPing,
      sessionsLostToReconfig: lostToReconfig(state.expiries, state.faults, session).length,
      check: report,
      recovery,
      finalRecovery: latencyOf(finalRecovery),
      releaseMs: latencyOf(state.releaseMs),
      timeoutOvershootMs: latencyOf(state.timeoutOvershoot),
      lossReasons: state.lossReasons,
      failureReasons: state.failureReasons,
      containersReaped: truth.containersReaped,
      sessionsClosed: truth.sessionCloses.size,
      unconfirmedTxns: unconfirmed,
      clock: {
        maxAbsOffsetMs: Math.max(0, ...clocks.map((clock) => clock.maxAbsOffsetMs)),
        worstBestRttMs: Math.max(0, ...clocks.map((clock) => clock.bestRttMs)),
      },
      nemesisFailures,
      notes: state.notes,
    };
  } finally {
    clearInterval(ticker);
    clearInterval(pinger);
    for (const worker of workers) worker.kill();
    await Promise.all(workers.map((worker) => worker.exited));
    for (const list of proxies) await Promise.all(list.map((proxy) => proxy.close()));
    await observer?.close().catch(() => {});
    await ensemble?.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * What is left under `root` once the workers are gone: waits (up to `timeoutMs`) for the
 * reaper to remove the empty containers; whatever remains then is left behind.
 */
async function leftoversUnder(
  client: ZkClient,
  root: string,
  timeoutMs: number,
  pollMs: number,
): Promise<string[]> {
  const deadline = mono() + timeoutMs;
  for (;;) {
    const found: string[] = [];
    const walk = async (path: string): Promise<void> => {
      const children = await client.promises.children(path).catch(() => [] as string[]);
      for (const child of children) {
        const full = `${path}/${child}`;
        found.push(full);
        await walk(full);
      }
    };
    await walk(root);
    if (found.length === 0) return found;
    if (mono() >= deadline) return Promise.all(found.map((path) => describeZnode(client, path)));
    await sleep(pollMs);
  }
}

/**
 * A znode left behind, with what tells why: a container the reaper would keep has `cversion` 0
 * (never had a child); a lock path made by zkrx carries the making acquisition's mark as data.
 */
async function describeZnode(client: ZkClient, path: string): Promise<string> {
  const found = await client.promises.get(path).catch(() => undefined);
  if (!found) return path;
  const { stat, data } = found;
  const text =
    data.length > 0 ? `, data ${JSON.stringify(data.toString('utf8').slice(0, 80))}` : '';
  return `${path} (cversion ${stat.cversion}, children ${stat.numChildren}, owner ${stat.ephemeralOwner}, czxid ${stat.czxid}${text})`;
}
