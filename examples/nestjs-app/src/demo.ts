/**
 * The demo: three instances of the app on one ZooKeeper doing the three jobs — payments one at a
 * time per order (409 when busy, 503 at once when ZooKeeper is out of reach), billing once per
 * tick on the leader, tenants spread over the instances — then the leader closed and restarted
 * with the same id.
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { ZkClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { LeaderService, ZK_CLIENT } from '@zkrx/nestjs';
import { FleetService } from '@zkrx/nestjs/fleet';
import type { TcpProxy, ZooKeeperServer } from '@zkrx/testing';
import { AppModule } from './app.module';
import { Billing } from './billing';
import { Journal, type JournalEntry } from './journal';
import { configFrom, PATHS } from './settings';

export interface DemoOptions {
  /** A ZooKeeper to use instead of starting an embedded one. */
  connect?: string;
  /** Billing runs to see with a steady leader, and after the hand-over (default 3). */
  ticks?: number;
  /** Where the demo's lines go (default: stdout). */
  print?: (line: string) => void;
}

/** What an HTTP request answered. */
export interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly error: string | undefined;
}

export interface DemoSummary {
  /** Two payments of one order sent to two instances at once: both done, one after the other. */
  readonly concurrentPayments: readonly number[];
  readonly paymentOverlaps: number;
  readonly paymentTokensRising: boolean;
  /** A payment while another instance holds the order's lock. */
  readonly busy: Answer;
  /** A payment on an instance whose connection to ZooKeeper is cut. */
  readonly unavailable: Answer;
  /** Billing runs by tick (ms since the epoch), each with the instance that ran it. */
  readonly billingRunsPerTick: ReadonlyMap<number, readonly string[]>;
  /** Ticks the steady leader's scheduler fired, and the billing runs it made in them. */
  readonly steadyLeaderFired: number;
  readonly steadyLeaderRuns: number;
  readonly firstLeader: string;
  readonly nextLeader: string;
  /** Tenants synced on two instances (or twice on one) at once: expected 0. */
  readonly tenantOverlaps: number;
  /** Tenants synced at least once, of 12. */
  readonly tenantsSynced: number;
  /** The tenants the restarted instance (same id) owns after rejoining. */
  readonly restartedOwns: readonly string[];
  /** Whether every expectation held. */
  readonly ok: boolean;
}

interface Instance {
  readonly name: string;
  readonly app: INestApplication;
  readonly url: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until `predicate` holds (polled), failing after `timeoutMs` with `what`. */
async function until(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function post(url: string): Promise<Answer & { body: unknown }> {
  const response = await fetch(url, { method: 'POST' });
  const body = (await response.json()) as { error?: string };
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    error: body.error,
    body,
  };
}

/**
 * Runs the demo and returns what happened.
 *
 * ## Example
 * ```ts
 * const summary = await runDemo({ ticks: 3 });
 * console.log(summary.ok);
 * // Output: true
 * ```
 *
 * @param options Where ZooKeeper is, how many ticks, where lines go.
 * @return The summary.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const ticks = options.ticks ?? 3;
  const print = options.print ?? ((line: string) => console.log(line));
  const started = performance.now();
  const line = (who: string, text: string) =>
    print(
      `[${((performance.now() - started) / 1000).toFixed(2).padStart(6)}s] ${who.padEnd(4)} ${text}`,
    );
  const journal = new Journal((entry: JournalEntry) => {
    if (entry.kind === 'billing') line(entry.instance, `billing run (tick ${entry.subject})`);
    if (entry.kind === 'payment') {
      line(
        entry.instance,
        `payment of order ${entry.subject}, fencing token ${entry.fencingToken}`,
      );
    }
  });

  // Loaded only here: with ZK_CONNECT the app runs without starting a server.
  const testing = await import('@zkrx/testing');
  let server: ZooKeeperServer | undefined;
  let proxy: TcpProxy | undefined;
  const instances: Instance[] = [];
  let admin: ZkClient | undefined;
  try {
    if (!options.connect) {
      server = await testing.startZooKeeper();
      line('demo', `embedded ZooKeeper on ${server.connectString}`);
    }
    const connect = options.connect ?? (server as ZooKeeperServer).connectString;
    // Instance C reaches ZooKeeper through a fault proxy: the demo cuts it at the end.
    proxy = await testing.startProxy(connect.split('/')[0] as string);
    const chroot = connect.includes('/') ? connect.slice(connect.indexOf('/')) : '';

    const start = async (name: string): Promise<Instance> => {
      const via = name === 'C' ? `${proxy?.connectString}${chroot}` : connect;
      const config = configFrom({ ...process.env, ZK_CONNECT: via }, name);
      const app = await NestFactory.create(AppModule.register(config, journal), {
        logger: ['error', 'warn'],
      });
      app.enableShutdownHooks();
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      line('demo', `instance ${name} up on ${url}`);
      return { name, app, url };
    };
    for (const name of ['A', 'B', 'C']) instances.push(await start(name));
    for (const instance of instances) {
      const ready = await fetch(`${instance.url}/health/ready`);
      line(instance.name, `GET /health/ready → ${ready.status}`);
    }

    // Job 1: payments of one order, one at a time whichever instance takes them.
    line('demo', 'POST /orders/42/pay on A and B at once');
    const both = await Promise.all(
      instances.slice(0, 2).map((one) => post(`${one.url}/orders/42/pay`)),
    );
    const concurrentPayments = both.map((answer) => answer.status);
    const payments = journal.of('payment', '42');
    const tokens = [...payments]
      .sort((a, b) => a.start - b.start)
      .map((entry) => entry.fencingToken ?? 0);
    const paymentTokensRising = tokens.every(
      (token, index) => index === 0 || token > (tokens[index - 1] ?? 0),
    );
    const paymentOverlaps = journal.overlapping('payment').length;

    // Busy: another instance (here the demo's own client) holds order 7's lock.
    admin = (instances[0] as Instance).app.get<ZkClient>(ZK_CLIENT);
    const holder = await acquire(admin, `${PATHS.orders}/7`);
    const busyAnswer = await post(`${(instances[1] as Instance).url}/orders/7/pay`);
    await holder.release();
    const busy: Answer = {
      status: busyAnswer.status,
      retryAfter: busyAnswer.retryAfter,
      error: busyAnswer.error,
    };
    line(
      'B',
      `POST /orders/7/pay while held elsewhere → ${busy.status} ${busy.error}, Retry-After ${busy.retryAfter}`,
    );

    // Job 2: billing on the leader, once per tick.
    const leads = (one: Instance) => one.app.get(LeaderService).isLeader(PATHS.billing);
    await until(() => instances.some(leads), 'a billing leader');
    const leader = instances.find(leads) as Instance;
    const billing = leader.app.get(Billing);
    const runsOf = (name: string) =>
      journal.of('billing').filter((entry) => entry.instance === name).length;
    // Counted between two quiet moments (no tick claiming or running): every tick the steady
    // leader's scheduler fired meanwhile, and every run it made.
    await until(() => billing.quiet, 'a quiet moment');
    const firedBefore = billing.fired;
    const runsBefore = runsOf(leader.name);
    await until(
      () => billing.fired - firedBefore >= ticks,
      `${ticks} billing ticks on ${leader.name}`,
    );
    await until(() => billing.quiet, 'a quiet moment');
    const steadyLeaderFired = billing.fired - firedBefore;
    const steadyLeaderRuns = runsOf(leader.name) - runsBefore;
    line(
      'demo',
      `${leader.name} leads billing: ${steadyLeaderRuns} runs in ${steadyLeaderFired} ticks`,
    );

    // Job 3: the tenants, each synced on one instance at a time.
    await until(
      () => new Set(journal.of('tenant').map((entry) => entry.subject)).size === 12,
      'every tenant synced',
    );
    for (const one of instances) {
      const owned = one.app.get(FleetService).assignment(PATHS.tenants)?.items ?? [];
      line(one.name, `owns ${owned.length} tenants: ${owned.join(', ')}`);
    }

    // The leader closes: billing moves, its tenants move; then it restarts with the same id.
    line('demo', `closing ${leader.name} (the billing leader)`);
    await leader.app.close();
    instances.splice(instances.indexOf(leader), 1);
    await until(() => instances.some(leads), 'the next billing leader');
    const next = instances.find(leads) as Instance;
    const nextRuns = runsOf(next.name);
    await until(
      () => runsOf(next.name) - nextRuns >= Math.min(2, ticks),
      `billing on ${next.name}`,
    );
    line('demo', `${next.name} leads billing now`);
    const restarted = await start(leader.name);
    instances.push(restarted);
    const fleetOf = (one: Instance) =>
      one.app.get(FleetService).assignment(PATHS.tenants)?.items ?? [];
    await until(() => fleetOf(restarted).length > 0, `${leader.name} to own tenants again`);
    const restartedOwns = fleetOf(restarted);
    line(leader.name, `restarted with the same id: owns ${restartedOwns.join(', ')}`);

    // ZooKeeper out of reach for C: a payment there answers 503 at once, not after its timeout.
    const cut = instances.find((one) => one.name === 'C') as Instance;
    proxy.refuse(true);
    proxy.cut();
    const unavailableAnswer = await post(`${cut.url}/orders/9/pay`);
    const unavailable: Answer = {
      status: unavailableAnswer.status,
      retryAfter: unavailableAnswer.retryAfter,
      error: unavailableAnswer.error,
    };
    line(
      'C',
      `POST /orders/9/pay with ZooKeeper cut off → ${unavailable.status} ${unavailable.error}`,
    );
    proxy.refuse(false);

    const billingRunsPerTick = new Map<number, string[]>();
    for (const entry of journal.of('billing')) {
      const tick = Number(entry.subject);
      billingRunsPerTick.set(tick, [...(billingRunsPerTick.get(tick) ?? []), entry.instance]);
    }
    const tenantOverlaps = journal.overlapping('tenant').length;
    const tenantsSynced = new Set(journal.of('tenant').map((entry) => entry.subject)).size;
    const ok =
      concurrentPayments.every((status) => status === 201) &&
      paymentOverlaps === 0 &&
      paymentTokensRising &&
      busy.status === 409 &&
      unavailable.status === 503 &&
      [...billingRunsPerTick.values()].every((runs) => runs.length === 1) &&
      steadyLeaderRuns === steadyLeaderFired &&
      tenantOverlaps === 0 &&
      tenantsSynced === 12 &&
      restartedOwns.length > 0;
    print('');
    print('summary');
    print(
      `  payments of order 42 on A and B at once: ${concurrentPayments.join(', ')}, overlapping ${paymentOverlaps}, tokens rising ${paymentTokensRising}`,
    );
    print(
      `  a payment while its order is held elsewhere: ${busy.status} (${busy.error}, Retry-After ${busy.retryAfter})`,
    );
    print(`  a payment with ZooKeeper out of reach: ${unavailable.status} (${unavailable.error})`);
    print(
      `  billing: ${billingRunsPerTick.size} ticks, the most runs in one tick ${Math.max(...[...billingRunsPerTick.values()].map((runs) => runs.length))}; ${leader.name} ran ${steadyLeaderRuns} of ${steadyLeaderFired} ticks while it led, then ${next.name}`,
    );
    print(
      `  tenants: ${tenantsSynced} of 12 synced, synced twice at once: ${tenantOverlaps}; ${leader.name} restarted and owns ${restartedOwns.length}`,
    );
    print(ok ? 'OK: every job ran as promised' : 'FAILED');
    return {
      concurrentPayments,
      paymentOverlaps,
      paymentTokensRising,
      busy,
      unavailable,
      billingRunsPerTick,
      steadyLeaderFired,
      steadyLeaderRuns,
      firstLeader: leader.name,
      nextLeader: next.name,
      tenantOverlaps,
      tenantsSynced,
      restartedOwns,
      ok,
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.app.close()));
    await proxy?.close();
    await server?.close();
  }
}
