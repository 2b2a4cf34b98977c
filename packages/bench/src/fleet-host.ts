/**
 * The members of a `fleet-scale` run that live in one process: each its own client (session)
 * and `partition` subscription. The scenario drives them directly (one process) or through
 * `tools/fleet-worker.ts` (several), and hears every assignment change as an event.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createClient, type ZkClient } from '@zkrx/core';
import { type Assignment, partition } from '@zkrx/fleet';
import { expireSession, startProxy, type TcpProxy } from '@zkrx/testing';
import type { Subscription } from 'rxjs';
import type { RunContext } from './run-context';

/** What the scenario hears from a host. */
export type FleetEvent =
  | {
      readonly type: 'assignment';
      readonly id: string;
      /** Items owned now and not before, with their fencing tokens. */
      readonly added: readonly (readonly [string, number])[];
      readonly removed: readonly string[];
    }
  | { readonly type: 'failed'; readonly id: string; readonly error: string };

/** What the scenario tells a host to do. */
export type FleetCommand =
  | {
      readonly type: 'connect';
      readonly ids: readonly string[];
      /** False: the clients are made, not waited for (a server not up yet: `fleet-boot`). */
      readonly wait?: boolean;
    }
  | {
      readonly type: 'join';
      readonly ids: readonly string[];
      /** The item set the members state: the first (default), or the next one (a deploy's). */
      readonly set?: 'first' | 'next';
    }
  | { readonly type: 'leave'; readonly id: string }
  | { readonly type: 'expire'; readonly id: string }
  | { readonly type: 'crash'; readonly id: string }
  | { readonly type: 'cpu' }
  | { readonly type: 'close' };

/** The setting every host of a run shares. */
export interface FleetHostSettings {
  readonly connect: string;
  readonly path: string;
  readonly items: number;
  readonly sessionTimeoutMs: number;
  /** The member the `crash` step cuts off for good: its client goes through a proxy. */
  readonly crashVictim?: string;
  /** The next item set (a rolling deploy's): this many of the first set's items replaced. */
  readonly replaced?: number;
  /** Item names and member ids padded to this many bytes (`--name-bytes`). */
  readonly nameBytes?: number;
}

/** `name` padded with `x` to `bytes` bytes (ASCII), when longer than it is. */
function padded(name: string, bytes: number | undefined): string {
  return bytes === undefined || bytes <= name.length ? name : `${name}-`.padEnd(bytes, 'x');
}

/**
 * The items of a run: `item-00000`, ... (sorted as they are numbered), padded to `nameBytes`.
 */
export function fleetItems(count: number, nameBytes?: number): string[] {
  const width = Math.max(5, String(count - 1).length);
  return Array.from({ length: count }, (_, index) =>
    padded(`item-${String(index).padStart(width, '0')}`, nameBytes),
  );
}

/**
 * The next item set of a run: the first set with `replaced` of its items (spread over it)
 * replaced by new ones (`item-n-00000`, ...), sorted.
 */
export function nextFleetItems(count: number, replaced: number): string[] {
  const first = fleetItems(count);
  const step = Math.max(1, Math.floor(count / Math.max(1, replaced)));
  const gone = new Set(first.filter((_, index) => index % step === 0).slice(0, replaced));
  const width = Math.max(5, String(replaced - 1).length);
  const fresh = Array.from(
    { length: gone.size },
    (_, at) => `item-n-${String(at).padStart(width, '0')}`,
  );
  return [...first.filter((item) => !gone.has(item)), ...fresh].sort();
}

/** The member ids of a run: `member-000`, ..., padded to `nameBytes`. */
export function memberId(index: number, nameBytes?: number): string {
  return padded(`member-${String(index).padStart(3, '0')}`, nameBytes);
}

interface HostedMember {
  readonly client: ZkClient;
  subscription: Subscription | undefined;
  /** The crash victim's proxy. */
  proxy?: TcpProxy;
}

export class FleetHost {
  private readonly members = new Map<string, HostedMember>();
  private readonly items: readonly string[];
  private readonly next: readonly string[];

  /** `ZKRX_FLEET_DIAG=1`: what the process goes through, on stderr every 5 s. */
  private diagTimer: ReturnType<typeof setInterval> | undefined;
  /** Session state changes of this process's members, by the state entered. */
  private readonly entered = new Map<string, number>();
  private owned = 0;

  constructor(
    private readonly settings: FleetHostSettings,
    private readonly report: (event: FleetEvent) => void,
  ) {
    // One array each, shared by the members of this process (checked once, as a service would).
    this.items = fleetItems(settings.items, settings.nameBytes);
    this.next = settings.replaced ? nextFleetItems(settings.items, settings.replaced) : this.items;
    if (process.env.ZKRX_FLEET_DIAG) this.startDiagnostics();
  }

  /**
   * One line every 5 s: event-loop delay (max, p99), event-loop use, heap, the members' session
   * states now and the changes since the last line, items owned.
   */
  private startDiagnostics(): void {
    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    let elu = performance.eventLoopUtilization();
    const started = performance.now();
    this.diagTimer = setInterval(() => {
      const now = performance.eventLoopUtilization(elu);
      elu = performance.eventLoopUtilization();
      const states = new Map<string, number>();
      for (const member of this.members.values()) {
        states.set(member.client.state, (states.get(member.client.state) ?? 0) + 1);
      }
      const list = (map: Map<string, number>) =>
        [...map].map(([key, count]) => `${key}=${count}`).join(' ');
      process.stderr.write(
        `[diag ${process.pid} ${Math.round((performance.now() - started) / 1000)}s] ` +
          `lag max ${Math.round(delay.max / 1e6)} p99 ${Math.round(delay.percentile(99) / 1e6)} ms, ` +
          `elu ${now.utilization.toFixed(2)}, heap ${Math.round(process.memoryUsage().heapUsed / 1e6)} MB, ` +
          `owned ${this.owned}; states ${list(states)}; entered ${list(this.entered)}\n`,
      );
      delay.reset();
      this.entered.clear();
    }, 5_000);
    this.diagTimer.unref();
    const profileSeconds = Number(process.env.ZKRX_FLEET_PROF_S ?? 0);
    if (profileSeconds > 0) void profileFor(profileSeconds);
  }

  /** Runs one command; resolves what it answers (the CPU time for `cpu`). */
  async run(command: FleetCommand): Promise<unknown> {
    switch (command.type) {
      case 'connect':
        if (command.wait === false) {
          for (const id of command.ids) void this.connect(id, false);
          return undefined;
        }
        // A few at a time: a hundred handshakes at once only slow each other down.
        for (let at = 0; at < command.ids.length; at += 16) {
          await Promise.all(command.ids.slice(at, at + 16).map((id) => this.connect(id)));
        }
        return undefined;
      case 'join':
        for (const id of command.ids)
          this.join(id, command.set === 'next' ? this.next : this.items);
        return undefined;
      case 'leave':
        this.member(command.id).subscription?.unsubscribe();
        return undefined;
      case 'expire':
        await expireSession(this.member(command.id).client);
        return undefined;
      case 'crash': {
        // As if its process died: no close, no packet more; the server expires its session
        // after the session timeout.
        const proxy = this.member(command.id).proxy;
        if (!proxy) throw new Error(`${command.id} is not the crash victim`);
        proxy.refuse();
        proxy.cut();
        return undefined;
      }
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return user + system;
      }
      case 'close':
        await this.close();
        return undefined;
    }
  }

  private async connect(id: string, wait = true): Promise<void> {
    const proxy =
      id === this.settings.crashVictim ? await startProxy(this.settings.connect) : undefined;
    const client = createClient({
      connect: proxy?.connectString ?? this.settings.connect,
      sessionTimeoutMs: this.settings.sessionTimeoutMs,
    });
    this.members.set(id, { client, subscription: undefined, proxy });
    if (this.diagTimer) {
      client.session$.subscribe((event) => {
        this.entered.set(event.state, (this.entered.get(event.state) ?? 0) + 1);
      });
    }
    if (wait) await client.connected(60_000);
  }

  private member(id: string): HostedMember {
    const member = this.members.get(id);
    if (!member) throw new Error(`no member ${id} in this process`);
    return member;
  }

  private join(id: string, items: readonly string[]): void {
    const member = this.member(id);
    member.subscription = partition(member.client, this.settings.path, items, {
      id,
    }).subscribe({
      next: (assignment: Assignment) => {
        this.owned += assignment.added.length - assignment.removed.length;
        this.report({
          type: 'assignment',
          id,
          added: assignment.added.map((item) => [
            item,
            assignment.owned.get(item)?.fencingToken ?? 0,
          ]),
          removed: assignment.removed,
        });
      },
      error: (error: unknown) => {
        this.report({ type: 'failed', id, error: String(error) });
      },
    });
  }

  async close(): Promise<void> {
    clearInterval(this.diagTimer);
    for (const member of this.members.values()) member.subscription?.unsubscribe();
    await Promise.all(
      [...this.members.values()].map(async (member) => {
        await member.client.close();
        await member.proxy?.close();
      }),
    );
    this.members.clear();
  }
}

/** `ZKRX_FLEET_PROF_S`: a CPU profile of this process's first seconds, in the working directory. */
async function profileFor(seconds: number): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000).unref());
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(`fleet-${process.pid}.cpuprofile`, JSON.stringify(profile));
  session.disconnect();
}

/**
 * What a fleet scenario waits for, checked again at every event (`check()`): resolves true once
 * `condition` holds, false after `limitMs` (never, without one); a failed run rejects it.
 */
export class FleetGate {
  private waiter: (() => void) | undefined;

  constructor(private readonly context: RunContext) {}

  /** An event came: the condition waited for is checked again. */
  check(): void {
    this.waiter?.();
  }

  until(condition: () => boolean, limitMs?: number): Promise<boolean> {
    return this.context.guard(
      new Promise<boolean>((resolve) => {
        const timer =
          limitMs === undefined
            ? undefined
            : setTimeout(() => {
                this.waiter = undefined;
                resolve(false);
              }, limitMs);
        const check = () => {
          if (!condition()) return;
          clearTimeout(timer);
          this.waiter = undefined;
          resolve(true);
        };
        this.waiter = check;
        check();
      }),
    );
  }
}

/** A process of members: this one, or a forked `tools/fleet-worker.js`. */
export interface Host {
  run(command: FleetCommand): Promise<unknown>;
  close(): Promise<void>;
}

export function localHost(settings: FleetHostSettings, report: (event: FleetEvent) => void): Host {
  const host = new FleetHost(settings, report);
  return { run: (command) => host.run(command), close: () => host.close() };
}

/** The built worker: `dist/tools/fleet-worker.js` of this package. */
function workerScript(): string {
  for (const candidate of [
    './tools/fleet-worker.js',
    '../tools/fleet-worker.js',
    '../../dist/tools/fleet-worker.js',
    '../dist/tools/fleet-worker.js',
  ]) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('--processes > 1 needs the built worker (pnpm --filter @zkrx/bench build)');
}

export function workerHost(settings: FleetHostSettings, report: (event: FleetEvent) => void): Host {
  const child: ChildProcess = fork(workerScript(), [JSON.stringify(settings)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const pending = new Map<number, { resolve(value: unknown): void; reject(e: Error): void }>();
  child.on(
    'message',
    (message: { seq?: number; value?: unknown; error?: string; event?: FleetEvent }) => {
      if (message.event) return report(message.event);
      const waiter = pending.get(message.seq as number);
      pending.delete(message.seq as number);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.value);
    },
  );
  child.on('exit', () => {
    for (const waiter of pending.values()) waiter.reject(new Error('a fleet worker exited'));
    pending.clear();
  });
  const run = (command: FleetCommand) =>
    new Promise<unknown>((resolve, reject) => {
      const at = ++seq;
      pending.set(at, { resolve, reject });
      child.send({ seq: at, command });
    });
  return {
    run,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await run({ type: 'close' }).catch(() => {});
      await exited;
    },
  };
}
