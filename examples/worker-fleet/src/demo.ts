/**
 * The main job: starts an embedded ZooKeeper and a fleet of worker processes that elect a leader
 * (it hands out jobs) and share the jobs' shards (a @zkrx/fleet partition); kills one leader
 * (crash) and stops another (graceful), and prints the timeline and a summary: the failovers,
 * how the shards moved and what stayed put, that no shard had two owners at once and that no
 * job ran twice.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createClient } from '@zkrx/core';
import { startZooKeeper } from '@zkrx/testing';
import { fleetPaths, type ReportedEvent, shardName, type WorkerConfig } from './protocol';

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '4' },
    jobs: { type: 'string', default: '36' },
    shards: { type: 'string', default: '8' },
    'session-timeout': { type: 'string', default: '2000' },
    'issue-every': { type: 'string', default: '120' },
    'job-ms': { type: 'string', default: '150' },
    connect: { type: 'string' },
  },
});

const settings = {
  workers: Number(args.workers),
  jobs: Number(args.jobs),
  shards: Number(args.shards),
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
  const shards = Array.from({ length: settings.shards }, (_, index) => shardName(index));
  for (const path of [paths.jobs, paths.done]) await client.promises.mkdirp(path);
  await client.promises.create(paths.cursor, '0');

  const workers = new Map<string, ChildProcess>();
  const events: ReportedEvent[] = [];
  // ZooKeeper, not the workers' reports, says which jobs are done: a worker killed right after
  // writing a job's done marker never gets to report it over IPC.
  const done = new Set<string>();
  const ran = new Map<string, string[]>();
  const terms: { worker: string; start: number; end: number }[] = [];
  /** Who owns each shard now, and every stretch of ownership (its token; end NaN while owned). */
  const shardOwner = new Map<string, string>();
  const ownership = new Map<
    string,
    { worker: string; token: number; start: number; end: number }[]
  >();
  /** Workers killed or stopped: no longer counted as live. */
  const gone = new Set<string>();
  const endOwnership = (worker: string, shard: string, at: number) => {
    const open = ownership.get(shard)?.findLast((s) => s.worker === worker && Number.isNaN(s.end));
    if (open) open.end = at;
    if (shardOwner.get(shard) === worker) shardOwner.delete(shard);
  };
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
          `ran ${event.job} of ${event.shard} in ${event.ms} ms (fencing token ${event.token})`,
          event.at,
        );
        break;
      case 'shards': {
        for (const shard of event.removed) endOwnership(event.worker, shard, event.at);
        for (const shard of event.added) {
          shardOwner.set(shard, event.worker);
          const stretches = ownership.get(shard) ?? [];
          stretches.push({
            worker: event.worker,
            token: event.tokens[shard] ?? -1,
            start: event.at,
            end: Number.NaN,
          });
          ownership.set(shard, stretches);
        }
        const changes = [
          ...event.added.map((shard) => `+${shard} (token ${event.tokens[shard]})`),
          ...event.removed.map((shard) => `-${shard} (${event.reasons[shard] ?? 'gone'})`),
        ];
        if (changes.length > 0) {
          line(
            event.worker,
            `shards ${changes.join(', ')} → owns ${event.items.join(', ') || 'none'}`,
            event.at,
          );
        }
        break;
      }
      case 'interrupted':
        line(event.worker, `stopped ${event.job} of ${event.shard}: ${event.reason}`, event.at);
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
      shards: settings.shards,
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
  /** Every shard owned by a live worker, each owning ⌊S/n⌋ or ⌈S/n⌉. */
  const balanced = () => {
    const live = [...workers.keys()].filter((worker) => !gone.has(worker));
    if (live.length === 0 || shards.some((shard) => !live.includes(shardOwner.get(shard) ?? ''))) {
      return false;
    }
    const counts = live.map((worker) => shards.filter((s) => shardOwner.get(s) === worker).length);
    const low = Math.floor(shards.length / live.length);
    return counts.every((count) => count === low || count === low + 1);
  };
  /** What a worker's departure did to the shards: moved (from → to), and what stayed put. */
  const rebalances: {
    how: string;
    moved: { shard: string; from: string; to: string }[];
    minimum: number;
    stayed: number;
    interrupted: string[];
  }[] = [];
  const departure = async (worker: string, how: string, act: () => void) => {
    await until(balanced, 30_000, 'the shards to be balanced');
    const before = new Map(shardOwner);
    const openBefore = new Map(
      shards.map((shard) => [shard, ownership.get(shard)?.at(-1)] as const),
    );
    const at = Date.now();
    act();
    gone.add(worker);
    await until(balanced, 30_000, `the shards of ${worker} to move`);
    const moved = shards
      .filter((shard) => shardOwner.get(shard) !== before.get(shard))
      .map((shard) => ({
        shard,
        from: before.get(shard) as string,
        to: shardOwner.get(shard) as string,
      }));
    const stayedShards = shards.filter((shard) => shardOwner.get(shard) === before.get(shard));
    // A shard that stayed put kept the very stretch of ownership it had (never interrupted).
    const interrupted = stayedShards.filter(
      (shard) => ownership.get(shard)?.at(-1) !== openBefore.get(shard),
    );
    const minimum = [...before.values()].filter((owner) => owner === worker).length;
    rebalances.push({ how, moved, minimum, stayed: stayedShards.length, interrupted });
    line(
      'demo',
      `shards after the ${how} (${Date.now() - at} ms): moved ${moved
        .map((move) => `${move.shard} ${move.from} → ${move.to}`)
        .join(', ')}; ${stayedShards.length} stayed put`,
    );
  };
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
    const rebalanced = departure(crashed, 'crash', () => {
      line(
        'demo',
        `killing the leader ${crashed} (SIGKILL, pid ${workers.get(crashed)?.pid}): a crash`,
      );
      workers.get(crashed)?.kill('SIGKILL');
      endTerm(crashed, crashAt);
      // It reports nothing more: its shards are its until its session expires, as far as it knew.
      for (const shard of shards) endOwnership(crashed, shard, crashAt);
    });
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
    await rebalanced;

    // A graceful stop: the leader closes its session; leadership moves within a round trip.
    await until(
      () => issued >= Math.floor((2 * settings.jobs) / 3),
      30_000,
      'two thirds of the jobs',
    );
    const stopped = currentLeader as string;
    const stopAt = Date.now();
    const handedOver = departure(stopped, 'graceful stop', () => {
      line('demo', `stopping the leader ${stopped} (SIGTERM): a graceful shutdown`);
      workers.get(stopped)?.kill('SIGTERM');
    });
    await until(
      () => currentLeader !== undefined && currentLeader !== stopped,
      30_000,
      'a new leader',
    );
    failovers.push({ how: 'graceful close', ms: (terms.at(-1)?.start ?? stopAt) - stopAt });
    line('demo', `failover after the graceful stop: ${failovers[1]?.ms} ms`);
    await handedOver;

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
  // No shard owned by two workers at once (by what the workers reported, in real time).
  let overlappingOwners = 0;
  for (const stretches of ownership.values()) {
    for (const [index, a] of stretches.entries()) {
      for (const b of stretches.slice(index + 1)) {
        const aEnd = Number.isNaN(a.end) ? Number.POSITIVE_INFINITY : a.end;
        const bEnd = Number.isNaN(b.end) ? Number.POSITIVE_INFINITY : b.end;
        if (a.worker !== b.worker && a.start < bEnd && b.start < aEnd) overlappingOwners += 1;
      }
    }
  }
  // Tokens of a shard rise from owner to owner.
  const tokenOrder = [...ownership.values()].filter((stretches) =>
    stretches.some(
      (stretch, index) => index > 0 && stretch.token <= (stretches[index - 1]?.token ?? 0),
    ),
  ).length;
  console.log(
    `  shards: ${settings.shards}; two owners at once: ${overlappingOwners}; tokens out of order: ${tokenOrder}`,
  );
  for (const rebalance of rebalances) {
    console.log(
      `  after the ${rebalance.how}: ${rebalance.moved.length} shards moved (the minimum: ${rebalance.minimum}), ${rebalance.stayed} stayed put, ${rebalance.interrupted.length} of them interrupted`,
    );
  }
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
    overlaps === 0 &&
    overlappingOwners === 0 &&
    tokenOrder === 0 &&
    rebalances.length === 2 &&
    rebalances.every(
      (rebalance) =>
        rebalance.moved.length === rebalance.minimum && rebalance.interrupted.length === 0,
    );
  console.log(
    ok
      ? '  OK: every job ran exactly once, one leader at a time, one owner per shard, only the departed shards moved'
      : '  NOT OK',
  );

  await deleteTree(client, root);
  await client.close();
  await server?.close();
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
