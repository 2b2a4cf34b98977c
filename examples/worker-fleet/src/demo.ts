/**
 * The main job: starts an embedded ZooKeeper and a fleet of worker processes, kills one leader
 * (crash) and stops another (graceful), and prints the timeline and a summary showing the
 * failovers and that no job ran twice.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createClient } from '@zkrx/core';
import { startZooKeeper } from '@zkrx/testing';
import { fleetPaths, type ReportedEvent, type WorkerConfig } from './protocol';

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '4' },
    jobs: { type: 'string', default: '36' },
    'session-timeout': { type: 'string', default: '2000' },
    'issue-every': { type: 'string', default: '120' },
    'job-ms': { type: 'string', default: '150' },
    connect: { type: 'string' },
  },
});

const settings = {
  workers: Number(args.workers),
  jobs: Number(args.jobs),
  sessionTimeoutMs: Number(args['session-timeout']),
  issueEveryMs: Number(args['issue-every']),
  jobMs: Number(args['job-ms']),
};
for (const [name, value] of Object.entries(settings)) {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name}: expected a positive integer, got ${value}`);
}
if (settings.workers < 3)
  throw new Error('--workers: the demo stops two leaders, so it needs at least 3 workers');

const started = Date.now();
const colors = ['\x1b[36m', '\x1b[33m', '\x1b[35m', '\x1b[32m', '\x1b[34m', '\x1b[31m'];
const plain = !process.stdout.isTTY;

function line(who: string, text: string, at = Date.now()): void {
  const seconds = ((at - started) / 1000).toFixed(2).padStart(6);
  const index = Number(who.replace(/\D/g, '')) || 0;
  const color = plain || who === 'demo' ? '' : (colors[index % colors.length] as string);
  console.log(
    `[${seconds}s] ${color}${who.padEnd(9)}${plain || who === 'demo' ? '' : '\x1b[0m'} ${text}`,
  );
}

async function main(): Promise<number> {
  const server = args.connect ? undefined : await startZooKeeper();
  const connect = args.connect ?? (server?.connectString as string);
  line('demo', server ? `embedded ZooKeeper on ${connect}` : `ZooKeeper at ${connect}`);
  const client = createClient({ connect });
  await client.connected();
  const root = `/fleet-demo-${started.toString(36)}`;
  const paths = fleetPaths(root);
  for (const path of [paths.jobs, paths.done, paths.locks]) await client.promises.mkdirp(path);
  await client.promises.create(paths.cursor, '0');

  const workers = new Map<string, ChildProcess>();
  const events: ReportedEvent[] = [];
  // ZooKeeper, not the workers' reports, says which jobs are done: a worker killed right after
  // writing a job's done marker never gets to report it over IPC.
  const done = new Set<string>();
  const ran = new Map<string, string[]>();
  const terms: { worker: string; start: number; end: number }[] = [];
  let issued = 0;
  let currentLeader: string | undefined;
  const waiters: (() => void)[] = [];
  const changed = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const until = (predicate: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const check = () => {
        if (predicate()) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  const endTerm = (worker: string, at: number) => {
    const term = terms.findLast(
      (candidate) => candidate.worker === worker && Number.isNaN(candidate.end),
    );
    if (term) term.end = at;
    if (currentLeader === worker) currentLeader = undefined;
  };

  const onEvent = (event: ReportedEvent) => {
    events.push(event);
    switch (event.type) {
      case 'leader':
        currentLeader = event.worker;
        terms.push({ worker: event.worker, start: event.at, end: Number.NaN });
        line(event.worker, 'elected leader: hands out jobs', event.at);
        break;
      case 'not-leader':
        endTerm(event.worker, event.at);
        line(event.worker, 'no longer leader', event.at);
        break;
      case 'issued':
        issued += 1;
        line(event.worker, `issued ${event.job}`, event.at);
        break;
      case 'ran':
        ran.set(event.job, [...(ran.get(event.job) ?? []), event.worker]);
        line(
          event.worker,
          `ran ${event.job} in ${event.ms} ms under its lock (fencing token ${event.token})`,
          event.at,
        );
        break;
      case 'duplicate':
        line(event.worker, `!! ${event.job} was already done: it ran twice`, event.at);
        break;
      case 'session':
        if (event.state !== 'connected' && event.state !== 'closed')
          line(event.worker, `session ${event.state}`, event.at);
        break;
      case 'error':
        line(event.worker, `error: ${event.message}`, event.at);
        break;
      default:
        break;
    }
    changed();
  };

  const spawn = (index: number) => {
    const id = `worker-${index}`;
    const config: WorkerConfig = {
      id,
      connect,
      root,
      sessionTimeoutMs: settings.sessionTimeoutMs,
      jobs: settings.jobs,
      issueEveryMs: settings.issueEveryMs,
      jobMs: settings.jobMs,
    };
    const child = fork(new URL('./worker.js', import.meta.url), {
      env: { ...process.env, ZKRX_WORKER: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (message) => onEvent(message as ReportedEvent));
    child.on('exit', () => {
      workers.delete(id);
      changed();
    });
    workers.set(id, child);
  };

  let failures = 0;
  const failovers: { how: string; ms: number }[] = [];
  const doneWatch = client.watchChildren(paths.done).subscribe({
    next: (children) => {
      for (const job of children) done.add(job);
      changed();
    },
    error: (error: unknown) => line('demo', `error watching ${paths.done}: ${String(error)}`),
  });
  try {
    line(
      'demo',
      `starting ${settings.workers} workers; session timeout ${settings.sessionTimeoutMs} ms, ${settings.jobs} jobs`,
    );
    for (let index = 1; index <= settings.workers; index++) spawn(index);
    await until(() => currentLeader !== undefined, 15_000, 'a leader');

    // A crash: the leader's process dies; its session expires after the session timeout.
    await until(() => issued >= Math.floor(settings.jobs / 3), 30_000, 'a third of the jobs');
    const crashed = currentLeader as string;
    const crashAt = Date.now();
    line(
      'demo',
      `killing the leader ${crashed} (SIGKILL, pid ${workers.get(crashed)?.pid}): a crash`,
    );
    workers.get(crashed)?.kill('SIGKILL');
    endTerm(crashed, crashAt);
    await until(
      () => currentLeader !== undefined && currentLeader !== crashed,
      30_000,
      'a new leader',
    );
    failovers.push({
      how: 'crash (session expiry)',
      ms: (terms.at(-1)?.start ?? crashAt) - crashAt,
    });
    line(
      'demo',
      `failover after the crash: ${failovers[0]?.ms} ms (bounded by the session timeout)`,
    );

    // A graceful stop: the leader closes its session; leadership moves within a round trip.
    await until(
      () => issued >= Math.floor((2 * settings.jobs) / 3),
      30_000,
      'two thirds of the jobs',
    );
    const stopped = currentLeader as string;
    const stopAt = Date.now();
    line('demo', `stopping the leader ${stopped} (SIGTERM): a graceful shutdown`);
    workers.get(stopped)?.kill('SIGTERM');
    await until(
      () => currentLeader !== undefined && currentLeader !== stopped,
      30_000,
      'a new leader',
    );
    failovers.push({ how: 'graceful close', ms: (terms.at(-1)?.start ?? stopAt) - stopAt });
    line('demo', `failover after the graceful stop: ${failovers[1]?.ms} ms`);

    await until(() => done.size >= settings.jobs, 60_000, 'every job to be done');
  } catch (error) {
    failures += 1;
    line('demo', `FAILED: ${(error as Error).message}`);
  } finally {
    for (const child of workers.values()) child.kill('SIGTERM');
    await until(() => workers.size === 0, 10_000, 'the workers to stop').catch(() => {
      for (const child of workers.values()) child.kill('SIGKILL');
    });
  }

  doneWatch.unsubscribe();
  const issuedInZk = Number((await client.promises.get(paths.cursor)).data.toString());
  const markers = await client.promises.children(paths.done);
  // Jobs done whose worker died before it could report them: the marker names who ran them.
  const unreported: string[] = [];
  for (const job of markers.filter((name) => !ran.has(name)).sort()) {
    const by = (await client.promises.get(`${paths.done}/${job}`)).data.toString();
    unreported.push(`${job} (${by})`);
  }
  const twice = [...ran.entries()].filter(([, who]) => who.length > 1);
  const duplicates = events.filter((event) => event.type === 'duplicate').length;
  const overlaps = terms.filter((term, index) =>
    terms.some(
      (other, j) =>
        j !== index &&
        term.start < (Number.isNaN(other.end) ? Number.POSITIVE_INFINITY : other.end) &&
        other.start < (Number.isNaN(term.end) ? Number.POSITIVE_INFINITY : term.end),
    ),
  ).length;
  console.log('');
  console.log('Summary');
  console.log(
    `  jobs issued ${issuedInZk}, done ${markers.length}/${settings.jobs} (by their markers in ZooKeeper)`,
  );
  if (unreported.length > 0)
    console.log(
      `  done, but its worker stopped before it heard back from ZooKeeper: ${unreported.join(', ')}`,
    );
  console.log(`  jobs that ran twice: ${twice.length + duplicates}`);
  console.log(
    `  leaders: ${terms.map((term) => term.worker).join(' → ')} (overlapping terms: ${overlaps})`,
  );
  for (const failover of failovers)
    console.log(`  failover after ${failover.how}: ${failover.ms} ms`);
  const ok =
    failures === 0 &&
    issuedInZk === settings.jobs &&
    markers.length === settings.jobs &&
    twice.length === 0 &&
    duplicates === 0 &&
    overlaps === 0;
  console.log(ok ? '  OK: every job ran exactly once, one leader at a time' : '  NOT OK');

  await deleteTree(client, root);
  await client.close();
  await server?.stop();
  return ok ? 0 : 1;
}

async function deleteTree(client: ReturnType<typeof createClient>, path: string): Promise<void> {
  for (const child of await client.promises.children(path).catch(() => [])) {
    await deleteTree(client, `${path}/${child}`);
  }
  await client.promises.delete(path).catch(() => {});
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
