/**
 * The command line: the peers' options (`--connect --scenario --clients --ops --warmup
 * --warmup-hold-ms --stall-s`) plus `--json`, `--chart` and `--scale`, checked into one object.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/** Every scenario, in the order of the matrix and the table. */
export const SCENARIO_NAMES = [
  'floor-create-delete',
  'floor-getchildren',
  'pipelined-get',
  'mutex-uncontended',
  'mutex-contended',
  'rwlock-mixed',
  'semaphore',
  'leader-failover',
  'herd',
  'memory',
  'fleet-scale',
  'fleet-members',
  'fleet-rollout',
  'fleet-boot',
] as const;

export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/**
 * The clients a run can measure: zkrx (its transport: `ZKRX_BENCH_TRANSPORT`), or the peer a
 * Node user would pick instead, `node-zookeeper-client` (npm), for the raw scenarios; and
 * `zkrx-unbatched`, zkrx created with `batchReads: false` (every get its own request).
 */
export const IMPL_NAMES = ['zkrx', 'node-zookeeper-client', 'zkrx-unbatched'] as const;

export type ImplName = (typeof IMPL_NAMES)[number];

/**
 * How the lock scenarios take each lease, as users write it: `acquire` (nobody listening for its
 * end), `signal` (`acquire`, then its `signal` read: what `@Locked` and `zkLock` do), or
 * `observable` (the `mutex()`, `semaphore()`, `readLock()`/`writeLock()` observables, released by
 * unsubscribing).
 */
export const LEASE_FORMS = ['acquire', 'signal', 'observable'] as const;

export type LeaseForm = (typeof LEASE_FORMS)[number];

/** The scenarios node-zookeeper-client runs: raw calls only (it has no recipes). */
export const PEER_SCENARIOS: readonly ScenarioName[] = [
  'floor-create-delete',
  'floor-getchildren',
  'pipelined-get',
];

export interface BenchOptions {
  /** `host:port` of a running server; absent: start an embedded one. */
  readonly connect: string | undefined;
  /** The scenarios asked for (all when none). */
  readonly scenarios: readonly ScenarioName[];
  /** The client measured in a single run (`--impl`); the matrix runs its peers itself. */
  readonly impl: ImplName;
  /** The matrix's peers (`--peers`); undefined: every peer of each scenario. */
  readonly peers: readonly PeerName[] | undefined;
  readonly clients: number | undefined;
  readonly ops: number | undefined;
  /** fleet-scale: the Node processes the members are spread over (default 1). */
  readonly processes: number | undefined;
  /** fleet-scale: item names and member ids padded to this many bytes (default: short). */
  readonly nameBytes: number | undefined;
  /** fleet-boot: how long the fleet waits for its server (s; default 60). */
  readonly bootSeconds: number | undefined;
  /** fleet-scale: the steps to take (default all). */
  readonly fleetSteps: readonly FleetStepName[] | undefined;
  /** The lock scenarios: how each lease is taken (`--form`). */
  readonly form: LeaseForm;
  /** The lock scenarios: every worker on one client, one session (`--one-client`, as the peers). */
  readonly oneClient: boolean;
  /** The lock scenarios: each acquisition's `timeoutMs` (`--timeout-ms`); undefined: none. */
  readonly timeoutMs: number | undefined;
  /** pipelined-get: requests kept in flight on the one session. */
  readonly inFlight: number;
  /** pipelined-get: the node's data size; undefined: a small value (18 bytes). */
  readonly dataBytes: number | undefined;
  /** Interleaved rounds of the selected matrix; the table shows each row's best round. */
  readonly rounds: number;
  /** Where the Java peer (`CuratorBench.java`) lives; undefined: found by walking up to `shared/peers`. */
  readonly peersDir: string | undefined;
  /** Warm-up ops (or rounds); undefined: the scenario's default. */
  readonly warmup: number | undefined;
  /** Hold inside the critical section during warm-up; undefined: the scenario's default. */
  readonly warmupHoldMs: number | undefined;
  /** The watchdog's limit: no op finished for this long ends the run with exit 3. */
  readonly stallSeconds: number;
  /** Where to write the JSON lines. */
  readonly json: string | undefined;
  /** Where to write the SVG chart (matrix runs). */
  readonly chart: string | undefined;
  /** Multiplies the matrix's op counts and its server warm-up (e.g. 0.05 for a quick look). */
  readonly scale: number;
  readonly help: boolean;
  /** Hidden: break the recipe (a read lock as the mutex...) so the invariant checks must fire. */
  readonly selfTestBroken: boolean;
  /** Hidden: a client holds the lock for ever, so the stall watchdog must fire. */
  readonly selfTestStall: boolean;
}

/**
 * The matrix's peers: the Java client (CuratorBench.java's floors), node-zookeeper-client, and
 * zkrx without its batches of reads.
 */
export const PEER_NAMES = ['java', 'node-zookeeper-client', 'zkrx-unbatched'] as const;

export type PeerName = (typeof PEER_NAMES)[number];

/** The steps of fleet-scale, in their order. */
export const FLEET_STEP_NAMES = ['cold', 'join', 'leave', 'expire', 'crash'] as const;

export type FleetStepName = (typeof FLEET_STEP_NAMES)[number];

/** pipelined-get's requests in flight when `--in-flight` is not given. */
export const DEFAULT_IN_FLIGHT = 256;

export const USAGE = `zkrx bench: lock, read-write lock, semaphore and leader-election scenarios on ZooKeeper

Usage:
  node dist/cli.js                       the whole matrix on an embedded ZooKeeper (tmpfs data dir)
  node dist/cli.js --connect H:P --scenario S --clients C --ops N [--impl I]
                                         one run against a server: exactly one JSON line on stdout
  node dist/cli.js --connect H:P --scenario S,S... [--rounds R] [--peers P,...]
                                         the matrix's rows of those scenarios against that server

Options:
  --connect H:P        a running server (4lw.commands.whitelist must allow mntr); default: embedded
  --scenario S[,S...]  ${SCENARIO_NAMES.join(', ')}
  --clients C          ZooKeeper sessions (herd: waiters; memory: always 2)
  --ops N              measured ops (herd: measured releases; memory: pending waiters)
  --members C          fleet-scale, fleet-rollout: members (the same as --clients)
  --items N            fleet-scale, fleet-rollout: items (the same as --ops)
  --processes P        fleet-scale, fleet-rollout: Node processes the members are spread over (default 1)
  --name-bytes B       fleet-scale: item names and member ids padded to B bytes (the fleet refuses over 255)
  --boot-s S           fleet-boot: ZooKeeper starts S seconds after the fleet subscribed (default 60)
  --fleet-steps S,...  fleet-scale: ${FLEET_STEP_NAMES.join(', ')} (default all; cold first)
  --impl I             one run's client: ${IMPL_NAMES.join(', ')} (default zkrx;
                       node-zookeeper-client runs ${PEER_SCENARIOS.join(', ')})
  --form F             the lock scenarios' lease form: ${LEASE_FORMS.join(', ')} (default acquire;
                       signal: acquire, then lease.signal read; observable: mutex() and kin)
  --one-client         the lock scenarios: every worker on one client, one session (as the
                       peers' --one-client: one service, many requests on one lock)
  --timeout-ms MS      the lock scenarios: each acquisition's timeoutMs (default none)
  --in-flight K        pipelined-get: requests kept in flight (default ${DEFAULT_IN_FLIGHT})
  --data-bytes B       pipelined-get: the node's data size (default 18)
  --peers P[,P...]     the matrix's peers beside zkrx: ${PEER_NAMES.join(', ')} (default: all;
                       none: --peers '')
  --rounds R           run the selected matrix R times, interleaved; the table shows each
                       row's best round (default 1)
  --peers-dir DIR      where CuratorBench.java is (default: the nearest shared/peers above)
  --warmup W           warm-up ops (default max(20, N/4); leader-failover max(5, N/4))
  --warmup-hold-ms H   hold inside the critical section during warm-up (default 2; semaphore 20)
  --stall-s S          exit 3 when no op finishes for S seconds (default 10)
  --json FILE          write the JSON lines here (matrix default: bench-results/zkrx-<time>.jsonl)
  --chart FILE         write the SVG chart here (matrix default: next to the JSON lines)
  --scale X            multiply the matrix's op counts and its server warm-up (default 1)
  --help

Exit status: 0 ok, 1 error, 2 an exclusion invariant was violated, 3 stalled (lock znodes dumped).
`;

/** A bad command line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `--name`'s value as an integer >= `min` (undefined when absent); UsageError otherwise. */
export function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) {
    throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) {
    throw new UsageError(`--${name} must be a number >= 0, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

function isScenario(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}

/**
 * `parseArgs` on `argv`, strict and without positionals: an unknown option or a missing value
 * is a UsageError.
 */
export function parseStrict(
  argv: readonly string[],
  options: ParseArgsOptionsConfig,
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options })
      .values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Parses the command line; throws UsageError on an unknown option or a bad value.
 *
 * ## Example
 * ```ts
 * console.log(parseOptions(['--scenario', 'herd', '--clients', '10']).clients);
 * // Output: 10
 * ```
 */
export function parseOptions(argv: readonly string[]): BenchOptions {
  const values = parseStrict(argv, {
    connect: { type: 'string' },
    scenario: { type: 'string' },
    clients: { type: 'string' },
    ops: { type: 'string' },
    members: { type: 'string' },
    items: { type: 'string' },
    processes: { type: 'string' },
    'name-bytes': { type: 'string' },
    'boot-s': { type: 'string' },
    'fleet-steps': { type: 'string' },
    impl: { type: 'string' },
    form: { type: 'string' },
    'one-client': { type: 'boolean' },
    'timeout-ms': { type: 'string' },
    'in-flight': { type: 'string' },
    'data-bytes': { type: 'string' },
    peers: { type: 'string' },
    rounds: { type: 'string' },
    'peers-dir': { type: 'string' },
    warmup: { type: 'string' },
    'warmup-hold-ms': { type: 'string' },
    'stall-s': { type: 'string' },
    json: { type: 'string' },
    chart: { type: 'string' },
    scale: { type: 'string' },
    help: { type: 'boolean' },
    'self-test-broken': { type: 'boolean' },
    'self-test-stall': { type: 'boolean' },
  });
  const text = (key: string) => values[key] as string | undefined;
  const scenarios: ScenarioName[] = [];
  for (const name of (text('scenario') ?? '').split(',').filter(Boolean)) {
    if (!isScenario(name)) {
      throw new UsageError(
        `unknown scenario ${JSON.stringify(name)} (${SCENARIO_NAMES.join(', ')})`,
      );
    }
    scenarios.push(name);
  }
  const impl = text('impl') ?? 'zkrx';
  if (!(IMPL_NAMES as readonly string[]).includes(impl)) {
    throw new UsageError(`unknown impl ${JSON.stringify(impl)} (${IMPL_NAMES.join(', ')})`);
  }
  if (impl !== 'zkrx') {
    const other = scenarios.find((name) => !PEER_SCENARIOS.includes(name));
    if (other !== undefined) {
      throw new UsageError(
        `${impl} runs ${PEER_SCENARIOS.join(', ')} only, not ${JSON.stringify(other)}`,
      );
    }
  }
  const form = text('form') ?? 'acquire';
  if (!(LEASE_FORMS as readonly string[]).includes(form)) {
    throw new UsageError(`unknown form ${JSON.stringify(form)} (${LEASE_FORMS.join(', ')})`);
  }
  let peers: PeerName[] | undefined;
  const peerList = text('peers');
  if (peerList !== undefined) {
    peers = [];
    for (const name of peerList.split(',').filter(Boolean)) {
      if (!(PEER_NAMES as readonly string[]).includes(name)) {
        throw new UsageError(`unknown peer ${JSON.stringify(name)} (${PEER_NAMES.join(', ')})`);
      }
      peers.push(name as PeerName);
    }
  }
  const connect = text('connect');
  if (connect !== undefined && !/^[^,/:]+:\d+/.test(connect)) {
    throw new UsageError(`--connect must be host:port, got ${JSON.stringify(connect)}`);
  }
  let fleetSteps: FleetStepName[] | undefined;
  const stepList = text('fleet-steps');
  if (stepList !== undefined) {
    fleetSteps = [];
    for (const name of stepList.split(',').filter(Boolean)) {
      if (!(FLEET_STEP_NAMES as readonly string[]).includes(name)) {
        throw new UsageError(
          `unknown fleet step ${JSON.stringify(name)} (${FLEET_STEP_NAMES.join(', ')})`,
        );
      }
      fleetSteps.push(name as FleetStepName);
    }
  }
  const scale = positive('scale', text('scale'), 1);
  if (scale === 0) throw new UsageError('--scale must be > 0');
  return {
    connect,
    scenarios,
    impl: impl as ImplName,
    peers,
    clients: integer('members', text('members'), 1) ?? integer('clients', text('clients'), 1),
    ops: integer('items', text('items'), 1) ?? integer('ops', text('ops'), 1),
    processes: integer('processes', text('processes'), 1),
    nameBytes: integer('name-bytes', text('name-bytes'), 1),
    bootSeconds: text('boot-s') === undefined ? undefined : positive('boot-s', text('boot-s'), 0),
    fleetSteps,
    form: form as LeaseForm,
    oneClient: values['one-client'] === true,
    timeoutMs: integer('timeout-ms', text('timeout-ms'), 0),
    inFlight: integer('in-flight', text('in-flight'), 1) ?? DEFAULT_IN_FLIGHT,
    dataBytes: integer('data-bytes', text('data-bytes'), 0),
    rounds: integer('rounds', text('rounds'), 1) ?? 1,
    peersDir: text('peers-dir'),
    warmup: integer('warmup', text('warmup'), 0),
    warmupHoldMs:
      text('warmup-hold-ms') === undefined
        ? undefined
        : positive('warmup-hold-ms', text('warmup-hold-ms'), 0),
    stallSeconds: positive('stall-s', text('stall-s'), 10),
    json: text('json'),
    chart: text('chart'),
    scale,
    help: values.help === true,
    selfTestBroken: values['self-test-broken'] === true,
    selfTestStall: values['self-test-stall'] === true,
  };
}
