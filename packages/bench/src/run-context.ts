/**
 * One run of one scenario: its fresh path and sessions, the warm-up and measured phases over
 * global tickets, the server's packet count around them, the invariant and stall checks.
 */
import {
  createClient,
  isZkError,
  joinPath,
  type Transport,
  type ZkClient,
  ZkErrorCode,
} from '@zkrx/core';
import { nativeTransport } from '@zkrx/core/native';

/**
 * `ZKRX_BENCH_TRANSPORT=native` runs the sessions on the native transport (the stock `zookeeper`
 * binding) instead of the default TypeScript one; the result line's impl is then `zkrx-native`.
 */
export const benchTransport: 'typescript' | 'native' =
  process.env.ZKRX_BENCH_TRANSPORT === 'native' ? 'native' : 'typescript';

let transport: Transport | undefined;
function sessionTransport(): Transport | undefined {
  if (benchTransport === 'typescript') return undefined;
  transport ??= nativeTransport();
  return transport;
}

import { mntr } from '@zkrx/testing';
import type { FleetStepName, ImplName, LeaseForm, ScenarioName } from './options';
import {
  connectNodeZookeeperClient,
  NODE_ZOOKEEPER_CLIENT,
  type RawClient,
  zkrxRawClient,
} from './raw-client';
import { findListeningProcess, processCpuMicros } from './server-cpu';

/** The JSON line's `impl` of a zkrx run: its transport decides. */
export function zkrxImpl(): string {
  return benchTransport === 'native' ? 'zkrx-native' : 'zkrx';
}

/** zkrx created with `batchReads: false`: every get its own request. */
export const ZKRX_UNBATCHED: ImplName = 'zkrx-unbatched';

/** The JSON line's `impl` for a run of `impl`. */
export function implLabel(impl: ImplName): string {
  return impl === 'zkrx' ? zkrxImpl() : impl;
}

/** What one run is asked to do, every default filled in. */
export interface RunSettings {
  readonly connect: string;
  readonly scenario: ScenarioName;
  /** The client measured by the raw scenarios (the recipes' scenarios are zkrx's). */
  readonly impl: ImplName;
  readonly clients: number;
  readonly ops: number;
  /** pipelined-get: requests kept in flight. */
  readonly inFlight: number;
  /** pipelined-get: the node's data size (undefined: a small value). */
  readonly dataBytes: number | undefined;
  readonly warmup: number;
  readonly warmupHoldMs: number;
  readonly stallSeconds: number;
  readonly selfTestBroken: boolean;
  readonly selfTestStall: boolean;
  /** fleet-scale: the Node processes the members are spread over. */
  readonly processes?: number;
  /** fleet-scale: item names and member ids of this many bytes. */
  readonly nameBytes?: number;
  /** fleet-boot: how long the fleet waits for its server (s). */
  readonly bootSeconds?: number;
  /** fleet-scale: the steps to take. */
  readonly fleetSteps?: readonly FleetStepName[];
  /** The lock scenarios: how each lease is taken (`--form`). */
  readonly form: LeaseForm;
  /** The lock scenarios: every worker on one client (`--one-client`). */
  readonly oneClient: boolean;
  /** The lock scenarios: each acquisition's timeoutMs (`--timeout-ms`). */
  readonly timeoutMs: number | undefined;
}

/** Where a run writes its diagnostics (stderr in the CLI). */
export interface RunOutput {
  stderr(text: string): void;
}

/** Ends a run with an exit status: 2 an invariant was violated, 3 a stall. */
export class BenchExit extends Error {
  override readonly name = 'BenchExit';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** One simulated client's operation: runs ticket `t`, resolves its latency in ms. */
export type Worker = (ticket: number) => Promise<number>;

/** Starts request `ticket`; calls `done(ticket)` when its reply came, or `done(ticket, error)`. */
export type PipelinedIssue = (
  ticket: number,
  done: (ticket: number, error?: unknown) => void,
) => void;

/** What a measured phase produced. */
export interface Measured {
  /** One latency (ms) per measured op. */
  readonly latencies: ArrayLike<number>;
  readonly elapsedMs: number;
  /** Server packets sent in the measured phase, the mntr calls' own packets taken out. */
  readonly packets: number;
  /**
   * This process's CPU time (every thread) in the measured phase, µs (the phases of
   * {@link RunContext.measure}; scenarios that time their own phases leave it out).
   */
  readonly clientCpuMicros?: { readonly user: number; readonly system: number };
  /** The server's CPU time in the measured phase, µs, when it runs on this machine. */
  readonly serverCpuMicros?: number;
}

/** A scenario's result: the measured phase, the client count, and its own extra fields. */
export interface ScenarioResult extends Measured {
  readonly clients: number;
  readonly extra?: Readonly<Record<string, number | string>>;
}

const SESSION_TIMEOUT_MS = 10_000;
const PROGRESS_EVERY_MS = 2_000;

/** The first `host:port` of a connect string, for the four-letter words. */
export function firstHost(connect: string): string {
  return (connect.split(',')[0] as string).split('/')[0] as string;
}

/** Sleeps `ms` milliseconds. */
/**
 * The server's packets (`zk_packets_received` + `zk_packets_sent`), its sent packets alone and
 * its watches, from one mntr of the first host: what the fleet scenarios read around each step.
 */
export async function serverCounts(connect: string) {
  const metrics = await mntr(firstHost(connect));
  return {
    sent: Number(metrics.zk_packets_sent),
    packets: Number(metrics.zk_packets_received) + Number(metrics.zk_packets_sent),
    watches: Number(metrics.zk_watch_count),
    /** The bytes of every reply the server sent (`zk_response_bytes`; watch events not counted). */
    bytes: Number(metrics.zk_response_bytes ?? 0),
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class RunContext {
  /** The run's fresh root path: every node of the run lives under it. */
  readonly base: string;
  /** True during the warm-up phase: holders then hold for `warmupHoldMs`. */
  warming = false;
  /** Packets one `mntr` call adds itself (measured at start, subtracted from every window). */
  private mntrSelf = 0;
  private readonly clients: ZkClient[] = [];
  /** Sessions of another client (node-zookeeper-client), closed at the end. */
  private readonly rawPeers: RawClient[] = [];
  /** The server's process when it runs on this machine (for its CPU time). */
  private serverPid: number | undefined;
  private adminClient: ZkClient | undefined;
  private failure: unknown;
  /** The guarded waits in progress: a failure rejects them all. */
  private readonly guarded = new Set<(error: unknown) => void>();
  private lastProgress = performance.now();
  private phase: { label: string; done: number; total: number; shown: number } | undefined;
  private lastShown = performance.now();
  private timer: ReturnType<typeof setInterval> | undefined;
  private checkingStall = false;

  constructor(
    readonly settings: RunSettings,
    private readonly output: RunOutput,
  ) {
    const tag = Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
    this.base = `/bench-zkrx-${settings.scenario}-${tag}`;
  }

  /** The admin session (the first one): creates the base path and removes it at the end. */
  get admin(): ZkClient {
    if (!this.adminClient) throw new Error('the run has not started');
    return this.adminClient;
  }

  /** True once the run failed or stopped: loops end. */
  get stopped(): boolean {
    return this.failure !== undefined;
  }

  /** Opens the admin session, creates the base path, measures mntr's own packets, starts the watchdog. */
  async start(): Promise<void> {
    // Two back-to-back mntr calls: what one call adds to the counter (the peers do the same).
    this.mntrSelf = -(await this.packetsSent()) + (await this.packetsSent());
    this.adminClient = await this.connect();
    await this.admin.promises.create(this.base);
    const port = Number(firstHost(this.settings.connect).split(':').pop());
    if (Number.isInteger(port)) this.serverPid = findListeningProcess(port);
    this.timer = setInterval(() => this.onTick(), 250);
    this.timer.unref?.();
  }

  /** A new session, connected. Every session of the run is closed at the end. */
  async connect(): Promise<ZkClient> {
    const client = createClient({
      connect: this.settings.connect,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      transport: sessionTransport(),
      batchReads: this.settings.impl !== ZKRX_UNBATCHED,
    });
    this.clients.push(client);
    await this.guard(client.connected(20_000));
    this.progress();
    return client;
  }

  /**
   * A new session of the run's impl (`--impl`) for the raw scenarios: zkrx's promises, or a
   * node-zookeeper-client session. Closed at the end.
   */
  async connectRaw(): Promise<RawClient> {
    if (this.settings.impl !== NODE_ZOOKEEPER_CLIENT) {
      return zkrxRawClient(await this.connect(), implLabel(this.settings.impl));
    }
    const peer = await this.guard(
      connectNodeZookeeperClient(this.settings.connect, SESSION_TIMEOUT_MS, 20_000),
    );
    this.rawPeers.push(peer);
    this.progress();
    return peer;
  }

  /**
   * `count` new sessions, connected: one for each worker; with `--one-client`, one session that
   * every worker shares (`count` times the same client).
   */
  async connectMany(count: number): Promise<ZkClient[]> {
    if (this.settings.oneClient) return new Array<ZkClient>(count).fill(await this.connect());
    const clients: ZkClient[] = [];
    for (let index = 0; index < count; index++) clients.push(await this.connect());
    return clients;
  }

  /** Forgets a session the scenario closed itself (leader-failover). */
  forget(client: ZkClient): void {
    const index = this.clients.indexOf(client);
    if (index >= 0) this.clients.splice(index, 1);
  }

  /** `zk_packets_sent` from the server's mntr. */
  async packetsSent(): Promise<number> {
    const metrics = await mntr(firstHost(this.settings.connect));
    const value = metrics.zk_packets_sent;
    if (typeof value !== 'number') {
      throw new Error('mntr: no zk_packets_sent (is 4lw.commands.whitelist=* set on the server?)');
    }
    return value;
  }

  /** Packets one mntr call adds itself (subtract it for every mntr call inside a window). */
  get mntrSelfPackets(): number {
    return this.mntrSelf;
  }

  /** Polls `condition` every 10 ms until it holds; false when `timeoutMs` passed first. */
  async waitUntil(
    condition: () => boolean | Promise<boolean>,
    timeoutMs: number,
  ): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (await this.guard(Promise.resolve(condition()))) return true;
      if (performance.now() > deadline) return false;
      await this.guard(sleep(10));
    }
  }

  /** A server metric from mntr (e.g. `zk_watch_count`). */
  async metric(name: string): Promise<number> {
    const value = (await mntr(firstHost(this.settings.connect)))[name];
    if (typeof value !== 'number') throw new Error(`mntr: no ${name}`);
    return value;
  }

  /** Starts counting server packets; the returned function ends the window and resolves the count. */
  async packetWindow(): Promise<() => Promise<number>> {
    const start = await this.packetsSent();
    return async () => (await this.packetsSent()) - start - this.mntrSelf;
  }

  /** Marks progress for the watchdog (a session connected, a node listed...). */
  progress(): void {
    this.lastProgress = performance.now();
  }

  /** One op of the current phase finished (progress for the watchdog and the display). */
  tick(): void {
    this.lastProgress = performance.now();
    if (this.phase) this.phase.done += 1;
  }

  /** A diagnostic line on stderr, tagged with the run. */
  log(message: string): void {
    const { scenario, clients } = this.settings;
    this.output.stderr(`[${scenario} C=${clients}] ${message}\n`);
  }

  /** Shows a phase's progress on stderr (every 2 s while it runs). */
  beginPhase(label: string, total: number): void {
    this.phase = { label, done: 0, total, shown: -1 };
    this.lastShown = performance.now();
    this.lastProgress = performance.now();
    this.log(`${label}: ${total} ops`);
  }

  endPhase(): void {
    this.phase = undefined;
  }

  /** Holds inside the critical section during warm-up (so that the leases fill up). */
  async hold(): Promise<void> {
    if (this.warming && this.settings.warmupHoldMs > 0) await sleep(this.settings.warmupHoldMs);
  }

  /**
   * For `--self-test-broken`: holds until the run fails, so a broken lock surely lets one holder
   * too many in, however the machine schedules (a correct lock would stall instead: exit 3).
   */
  holdUntilFailure(): Promise<void> {
    return this.guard(new Promise<void>(() => {}));
  }

  /**
   * Waits for `promise`, unless the run fails first (violation, stall): then rejects with that.
   * (Not `Promise.race` with a never-settling promise: each race would stay attached to it, and
   * with it the value it resolved, e.g. the memory scenario's 10,000 leases.)
   */
  guard<T>(promise: Promise<T>): Promise<T> {
    promise.catch(() => {});
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.guarded.add(reject);
      promise.then(
        (value) => {
          this.guarded.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.guarded.delete(reject);
          reject(error);
        },
      );
    });
  }

  /** An exclusion invariant failed: the run ends with exit 2. Throws (to stop the worker). */
  violated(message: string): never {
    throw this.flagViolation(message);
  }

  /** As {@link violated} without throwing: for watch callbacks, which must never throw. */
  flagViolation(message: string): unknown {
    if (this.failure === undefined) this.output.stderr(`EXCLUSION VIOLATED: ${message}\n`);
    return this.fail(new BenchExit(2, `EXCLUSION VIOLATED: ${message}`));
  }

  /** Ends the run with `error` (the first failure wins); returns it. */
  fail(error: unknown): unknown {
    if (this.failure === undefined) {
      this.failure = error;
      for (const reject of this.guarded) reject(error);
      this.guarded.clear();
    }
    return this.failure;
  }

  /**
   * Runs the workers until `n` global tickets are used, each worker one op at a time (the
   * peers' thread per client). Resolves the elapsed ms.
   */
  async runPhase(
    label: string,
    n: number,
    workers: readonly Worker[],
    latencies: Float64Array,
  ): Promise<number> {
    let next = 0;
    this.beginPhase(label, n);
    const loop = async (worker: Worker) => {
      while (!this.stopped && next < n) {
        const ticket = next++;
        latencies[ticket] = await worker(ticket);
        this.tick();
      }
    };
    const started = performance.now();
    await this.guard(Promise.all(workers.map(loop)));
    const elapsed = performance.now() - started;
    this.endPhase();
    return elapsed;
  }

  /**
   * Keeps `inFlight` requests going until `n` tickets are used: `issue(ticket, done)` starts one
   * and calls `done(ticket)` (or `done(ticket, error)`) when its reply came; each reply starts
   * the next ticket at once, in the reply's callback. Resolves the elapsed ms; `latencies[t]` is
   * ticket t's issue → reply time.
   */
  runPipelinedPhase(
    label: string,
    n: number,
    inFlight: number,
    issue: PipelinedIssue,
    latencies: Float64Array,
  ): Promise<number> {
    this.beginPhase(label, n);
    const started = new Float64Array(n);
    let next = 0;
    let finished = 0;
    const t0 = performance.now();
    return this.guard(
      new Promise<number>((resolve, reject) => {
        const start = (ticket: number) => {
          started[ticket] = performance.now();
          issue(ticket, done);
        };
        const done = (ticket: number, error?: unknown): void => {
          if (error !== undefined) {
            reject(error);
            return;
          }
          const now = performance.now();
          latencies[ticket] = now - (started[ticket] as number);
          finished += 1;
          this.tick();
          if (this.stopped) return;
          if (next < n) start(next++);
          else if (finished === n) {
            this.endPhase();
            resolve(now - t0);
          }
        };
        while (next < Math.min(inFlight, n)) start(next++);
      }),
    );
  }

  /**
   * The warm-up (`warmup` ops, holders holding `warmupHoldMs`), then the measured phase
   * (`ops` ops, no hold) bracketed by mntr reads.
   */
  measure(workers: readonly Worker[], beforeMeasured?: () => void): Promise<Measured> {
    return this.measurePhases(
      (label, n, latencies) => this.runPhase(label, n, workers, latencies),
      beforeMeasured,
    );
  }

  /**
   * As {@link measure}, `inFlight` requests at a time (see {@link runPipelinedPhase});
   * `beforeMeasured` and `afterMeasured` run right around the measured phase.
   */
  measurePipelined(
    inFlight: number,
    issue: PipelinedIssue,
    beforeMeasured?: () => void,
    afterMeasured?: () => void,
  ): Promise<Measured> {
    return this.measurePhases(
      (label, n, latencies) => this.runPipelinedPhase(label, n, inFlight, issue, latencies),
      beforeMeasured,
      afterMeasured,
    );
  }

  private async measurePhases(
    phase: (label: string, n: number, latencies: Float64Array) => Promise<number>,
    beforeMeasured?: () => void,
    afterMeasured?: () => void,
  ): Promise<Measured> {
    const { warmup, ops } = this.settings;
    if (warmup > 0) {
      this.warming = true;
      await phase('warm-up', warmup, new Float64Array(warmup));
      this.warming = false;
    }
    const latencies = new Float64Array(ops);
    const end = await this.packetWindow();
    beforeMeasured?.();
    const server = this.serverPid === undefined ? undefined : processCpuMicros(this.serverPid);
    const cpu = process.cpuUsage();
    const elapsedMs = await phase('measured', ops, latencies);
    const clientCpuMicros = process.cpuUsage(cpu);
    afterMeasured?.();
    const serverAfter = this.serverPid === undefined ? undefined : processCpuMicros(this.serverPid);
    const packets = await end();
    return {
      latencies,
      elapsedMs,
      packets,
      clientCpuMicros,
      serverCpuMicros:
        server === undefined || serverAfter === undefined ? undefined : serverAfter - server,
    };
  }

  /** Closes every session (newest first: no failover cascade) and removes the base path. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const peer of this.rawPeers.splice(0)) await bounded(peer.close(), 5_000);
    const admin = this.adminClient;
    for (const client of [...this.clients].reverse()) {
      if (client !== admin) await bounded(client.close(), 5_000);
    }
    if (admin) {
      try {
        if (admin.state === 'connected' || admin.state === 'reconnected') {
          await bounded(removeTree(admin, this.base), 30_000);
        }
      } catch (error) {
        this.output.stderr(`(could not remove ${this.base}: ${String(error)})\n`);
      }
      await bounded(admin.close(), 5_000);
    }
    this.clients.length = 0;
  }

  private onTick(): void {
    const now = performance.now();
    const phase = this.phase;
    if (phase && phase.done !== phase.shown && now - this.lastShown >= PROGRESS_EVERY_MS) {
      phase.shown = phase.done;
      this.lastShown = now;
      this.log(`${phase.label}: ${phase.done}/${phase.total}`);
    }
    if (this.stopped || this.checkingStall) return;
    if (now - this.lastProgress > this.settings.stallSeconds * 1000) {
      this.checkingStall = true;
      const where = phase ? ` (${phase.label}: ${phase.done}/${phase.total} done)` : '';
      void this.stalled(`no operation completed for ${this.settings.stallSeconds} s${where}`);
    }
  }

  /** No progress for `stallSeconds`: dump the lock znodes, then end the run with exit 3. */
  private async stalled(message: string): Promise<void> {
    this.output.stderr(`STALLED: ${message}\n`);
    try {
      await bounded(this.dumpZnodes(), 5_000);
    } catch (error) {
      this.output.stderr(`  (znode dump failed: ${String(error)})\n`);
    }
    this.fail(new BenchExit(3, `STALLED: ${message}`));
  }

  private async dumpZnodes(): Promise<void> {
    const admin = this.admin;
    const dirs = await admin.promises.children(this.base);
    for (const dir of dirs.slice(0, 20)) {
      await this.dumpDir(admin, joinPath(this.base, dir), 0);
    }
    if (dirs.length > 20) this.output.stderr(`  ... and ${dirs.length - 20} more\n`);
  }

  private async dumpDir(admin: ZkClient, path: string, depth: number): Promise<void> {
    const children = await admin.promises.children(path);
    // Lock nodes sort by their sequence number (the last 10 digits).
    const sorted = children.sort((a, b) => a.slice(-10).localeCompare(b.slice(-10)));
    const shown = sorted.slice(0, 40).join(', ');
    const more = sorted.length > 40 ? `, ... (${sorted.length} in all)` : '';
    this.output.stderr(`  ${path}: [${shown}${more}]\n`);
    if (depth > 0) return;
    for (const child of children) {
      // The semaphore keeps its queues one level down (`locks`, `leases`).
      if (!/\d{10}$/.test(child)) await this.dumpDir(admin, joinPath(path, child), depth + 1);
    }
  }
}

function bounded<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  promise.catch(() => {});
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Deletes `path` and everything under it (many deletes in flight). */
export async function removeTree(client: ZkClient, path: string): Promise<void> {
  let children: string[];
  try {
    children = await client.promises.children(path);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) return;
    throw error;
  }
  await inBatches(children, 500, (child) => removeTree(client, joinPath(path, child)));
  try {
    await client.promises.delete(path);
  } catch (error) {
    if (!isZkError(error, ZkErrorCode.NoNode)) throw error;
  }
}

/** Runs `task` over `items`, at most `limit` at a time. */
export async function inBatches<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
