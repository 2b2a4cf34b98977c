/**
 * The demo: an embedded ZooKeeper, two instances of the Nest app, the report job running on the
 * leader only, concurrent restocks under one lock, then the leader closed and the job moving.
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { ZkClient } from '@zkrx/core';
import { LeaderService, ZK_CLIENT } from '@zkrx/nestjs';
import type { ZooKeeperServer } from '@zkrx/testing';
import { AppModule } from './app.module';
import type { Restocked } from './inventory.service';
import { Journal, type JournalEntry } from './journal';
import { REPORT_ELECTION, REPORT_EVERY_MS } from './settings';

export interface DemoOptions {
  /** A ZooKeeper to use instead of starting an embedded one. */
  connect?: string;
  /** How long to watch the report job before and after the leader closes. */
  phaseMs?: number;
  /**
   * Report runs the leader must have made before a phase ends (default 1): a phase lasts
   * `phaseMs` and then until then, so a slow machine shows as many runs as a fast one.
   */
  minReports?: number;
  /** Restock requests sent to each instance at once. */
  restocksPerInstance?: number;
  /** Where the demo's lines go (default: stdout). */
  print?: (line: string) => void;
}

export interface DemoSummary {
  /** The instance that led first, and the one that took over when it closed. */
  readonly firstLeader: string;
  readonly nextLeader: string;
  /** Report runs per instance while the first leader lived, and after it closed. */
  readonly reportsBefore: Readonly<Record<string, number>>;
  readonly reportsAfter: Readonly<Record<string, number>>;
  /** Pairs of report runs on two instances at once (expected 0). */
  readonly reportOverlaps: number;
  /** From the first leader's `app.close()` to the next leader's election. */
  readonly takeoverMs: number;
  /** Restocks served, pairs that overlapped (expected 0), tokens rising in run order. */
  readonly restocks: number;
  readonly restockOverlaps: number;
  readonly tokensRising: boolean;
  /** Each instance's health while both ran. */
  readonly health: Readonly<Record<string, string>>;
  /** Whether every expectation held. */
  readonly ok: boolean;
}

interface Instance {
  readonly name: string;
  readonly app: INestApplication;
  readonly url: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function count(entries: readonly JournalEntry[], names: readonly string[]) {
  return Object.fromEntries(
    names.map((name) => [name, entries.filter((entry) => entry.instance === name).length]),
  );
}

/**
 * Runs the demo and returns what happened.
 *
 * ## Example
 * ```ts
 * const summary = await runDemo({ phaseMs: 2_000 });
 * console.log(summary.ok);
 * // Output: true
 * ```
 *
 * @param options Where ZooKeeper is, how long each phase lasts, where lines go.
 * @return The summary.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const phaseMs = options.phaseMs ?? Math.max(2_500, REPORT_EVERY_MS * 5);
  const minReports = options.minReports ?? 1;
  const restocksPerInstance = options.restocksPerInstance ?? 3;
  const print = options.print ?? ((line: string) => console.log(line));
  const started = performance.now();
  const line = (who: string, text: string) =>
    print(
      `[${((performance.now() - started) / 1000).toFixed(2).padStart(6)}s] ${who.padEnd(5)} ${text}`,
    );

  const journal = new Journal((entry) => {
    if (entry.kind === 'report') line(entry.instance, 'report job runs (this instance leads)');
    else
      line(entry.instance, `restock under the inventory lock, fencing token ${entry.fencingToken}`);
  });
  let server: ZooKeeperServer | undefined;
  const instances: Instance[] = [];
  try {
    if (!options.connect) {
      // Loaded only here: with ZK_CONNECT the app runs without @zkrx/testing installed.
      const { startZooKeeper } = await import('@zkrx/testing');
      server = await startZooKeeper();
      line('demo', `embedded ZooKeeper on ${server.connectString}`);
    }
    const connect = options.connect ?? (server as ZooKeeperServer).connectString;
    for (const name of ['A', 'B']) {
      const app = await NestFactory.create(
        AppModule.register({ instance: name, connect, journal }),
        {
          logger: ['error', 'warn'],
        },
      );
      app.enableShutdownHooks();
      // Session changes, so a run that overlapped another can be told apart from a lost session.
      (app.get(ZK_CLIENT) as ZkClient).session$.subscribe(({ state }) => {
        if (state !== 'connecting' && state !== 'connected' && state !== 'closed') {
          line(name, `session ${state}`);
        }
      });
      await app.listen(0, '127.0.0.1');
      const url = await app.getUrl();
      instances.push({ name, app, url });
      line('demo', `instance ${name} up on ${url} (report job every ${REPORT_EVERY_MS} ms)`);
    }
    const leads = (instance: Instance) => instance.app.get(LeaderService).isLeader(REPORT_ELECTION);
    await until(() => instances.some(leads), 10_000, 'a leader');
    const leader = instances.find(leads) as Instance;
    const other = instances.find((instance) => instance !== leader) as Instance;
    line('demo', `${leader.name} leads ${REPORT_ELECTION}`);

    const health: Record<string, string> = {};
    for (const instance of instances) {
      const response = await fetch(`${instance.url}/health`);
      const body = (await response.json()) as {
        info?: { zookeeper?: { status: string; state: string } };
      };
      health[instance.name] = `${body.info?.zookeeper?.status} (${body.info?.zookeeper?.state})`;
      line(instance.name, `GET /health → ${response.status} zookeeper ${health[instance.name]}`);
    }

    const names = instances.map((instance) => instance.name);
    await sleep(phaseMs);
    const reportsOf = (who: Instance, from: number) =>
      journal
        .of('report')
        .slice(from)
        .filter((entry) => entry.instance === who.name).length;
    await until(() => reportsOf(leader, 0) >= minReports, 30_000, `${minReports} report runs`);
    const reportsBefore = count(journal.of('report'), names);
    line(
      'demo',
      `report job so far: ${names.map((name) => `${name} ${reportsBefore[name]}×`).join(', ')}`,
    );

    line('demo', `POST /inventory/restock ×${restocksPerInstance} on each instance at once`);
    const requests = instances.flatMap((instance) =>
      Array.from({ length: restocksPerInstance }, async () => {
        const response = await fetch(`${instance.url}/inventory/restock`, { method: 'POST' });
        if (!response.ok) throw new Error(`restock on ${instance.name}: HTTP ${response.status}`);
        return (await response.json()) as Restocked;
      }),
    );
    await Promise.all(requests);
    const restocks = journal.of('restock');
    const tokens = [...restocks]
      .sort((a, b) => a.start - b.start)
      .map((entry) => entry.fencingToken ?? 0);
    const tokensRising = tokens.every(
      (token, index) => index === 0 || token > (tokens[index - 1] ?? 0),
    );
    const restockOverlaps = journal.overlaps('restock');
    line(
      'demo',
      `${restocks.length} restocks, ${restockOverlaps} overlapping, fencing tokens ${tokensRising ? 'rising' : 'NOT rising'}`,
    );

    const beforeClose = journal.of('report').length;
    let ledAt = Number.NaN;
    const watching = other.app
      .get(LeaderService)
      .watchLeadership(REPORT_ELECTION)
      .subscribe((leading) => {
        if (leading && Number.isNaN(ledAt)) ledAt = performance.now();
      });
    line('demo', `closing instance ${leader.name} (the leader)`);
    const closing = performance.now();
    await leader.app.close();
    instances.splice(instances.indexOf(leader), 1);
    await until(() => !Number.isNaN(ledAt), 10_000, 'the next leader');
    watching.unsubscribe();
    const takeoverMs = ledAt - closing;
    line(
      'demo',
      `${other.name} leads ${Math.round(takeoverMs)} ms after ${leader.name} began to close`,
    );
    await until(() => journal.of('report').length > beforeClose, 10_000, 'the job to move');
    await sleep(phaseMs);
    await until(
      () => reportsOf(other, beforeClose) >= minReports,
      30_000,
      `${minReports} report runs`,
    );
    const reportsAfter = count(journal.of('report').slice(beforeClose), names);

    const reportOverlaps = journal.overlaps('report');
    // Which runs overlapped, so a failure tells a hand-over gap from anything else.
    const at = (ms: number) =>
      Number.isNaN(ms) ? 'still running' : `${((ms - started) / 1000).toFixed(3)}s`;
    for (const [run, other] of journal.overlapping('report')) {
      line(
        'demo',
        `OVERLAP: ${run.instance} ran ${at(run.start)}–${at(run.end)}, ${other.instance} ${at(other.start)}–${at(other.end)}`,
      );
    }
    const ok =
      reportsBefore[leader.name]! > 0 &&
      reportsBefore[other.name] === 0 &&
      reportsAfter[leader.name] === 0 &&
      reportsAfter[other.name]! > 0 &&
      reportOverlaps === 0 &&
      restocks.length === restocksPerInstance * names.length &&
      restockOverlaps === 0 &&
      tokensRising;
    const summary: DemoSummary = {
      firstLeader: leader.name,
      nextLeader: other.name,
      reportsBefore,
      reportsAfter,
      reportOverlaps,
      takeoverMs,
      restocks: restocks.length,
      restockOverlaps,
      tokensRising,
      health,
      ok,
    };
    print('');
    print('summary');
    print(
      `  report job while ${leader.name} led:   ${names.map((name) => `${name} ${reportsBefore[name]}×`).join(', ')}`,
    );
    print(
      `  report job after ${leader.name} closed: ${names.map((name) => `${name} ${reportsAfter[name]}×`).join(', ')} (${other.name} led ${Math.round(takeoverMs)} ms after the close began)`,
    );
    print(`  report runs on two instances at once: ${reportOverlaps}`);
    print(
      `  restocks: ${restocks.length}, overlapping: ${restockOverlaps}, fencing tokens rising: ${tokensRising}`,
    );
    print(
      ok ? 'OK: the job ran on one instance at a time and moved when its leader closed' : 'FAILED',
    );
    return summary;
  } finally {
    await Promise.all(instances.map((instance) => instance.app.close()));
    await server?.close();
  }
}
