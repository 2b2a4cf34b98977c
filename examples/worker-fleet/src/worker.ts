/**
 * One worker of the fleet: stands for leader (the leader hands out jobs), owns a share of the
 * shards (a @zkrx/fleet partition), and runs the jobs of the shards it owns, one at a time per
 * shard, writing each job's done marker only while it still owns the shard (a guarded write).
 * Reports each step to the demo over IPC.
 */
import { createClient, isZkError, op } from '@zkrx/core';
import { type OwnedItem, partition } from '@zkrx/fleet';
import { whileLeader } from '@zkrx/leader';
import {
  concatMap,
  concatWith,
  defer,
  distinct,
  EMPTY,
  filter,
  finalize,
  fromEvent,
  interval,
  lastValueFrom,
  mergeMap,
  NEVER,
  shareReplay,
  takeUntil,
  takeWhile,
} from 'rxjs';
import type { FleetEvent, WorkerConfig } from './protocol';
import { fleetPaths, jobName, shardName, shardOf } from './protocol';

const config = JSON.parse(process.env.ZKRX_WORKER ?? '{}') as WorkerConfig;
const paths = fleetPaths(config.root);
const shards = Array.from({ length: config.shards }, (_, index) => shardName(index));

function report(event: FleetEvent, sent: () => void = () => {}): void {
  if (process.connected) process.send?.({ ...event, worker: config.id, at: Date.now() }, sent);
  else sent();
}

const client = createClient({ connect: config.connect, sessionTimeoutMs: config.sessionTimeoutMs });
client.session$.subscribe(({ state }) => {
  if (state !== 'connecting') report({ type: 'session', state });
});

/** The leader's work: issue the next job every `issueEveryMs` until all are issued, then lead on. */
const issueJobs = () =>
  interval(config.issueEveryMs).pipe(
    concatMap(async () => {
      const cursor = await client.promises.get(paths.cursor);
      const next = Number(cursor.data.toString() || '0');
      if (next >= config.jobs) return false;
      const job = jobName(next);
      try {
        await client.promises.create(`${paths.jobs}/${job}`, `issued by ${config.id}`);
      } catch (error) {
        // A leader that died right after creating it: the job exists, move the cursor on.
        if (!isZkError(error, 'NodeExists')) throw error;
      }
      // The version check makes the cursor move once per job even across leaders.
      await client.promises.set(paths.cursor, String(next + 1), cursor.stat.version);
      report({ type: 'issued', job });
      return next + 1 < config.jobs;
    }),
    takeWhile((more) => more),
    mergeMap(() => EMPTY),
    // Every job issued: the leader stays leader until it goes (a term that ended with its work
    // would hand leadership round the fleet and leave nobody leading).
    concatWith(NEVER),
  );

whileLeader(
  client,
  paths.election,
  () =>
    defer(() => {
      report({ type: 'leader' });
      return issueJobs();
    }).pipe(finalize(() => report({ type: 'not-leader' }))),
  { id: config.id, requeue: false },
).subscribe({ error: (error: unknown) => report({ type: 'error', message: String(error) }) });

/**
 * Every job issued and not yet done, once each; the latest listing replayed to a shard owned
 * later (a shard that moves here after the last job was issued still finds its jobs).
 */
const jobs$ = client.watchChildren(paths.jobs).pipe(shareReplay({ bufferSize: 1, refCount: true }));

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve(true);
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Runs one job of a shard this worker owns: skipped if done; else done, then marked done by a
 * write that lands only while the shard's lock is still held (`owned.guard`): a worker that lost
 * the shard meanwhile writes nothing, and the shard's next owner runs the job.
 */
async function runJob(job: string, shard: string, owned: OwnedItem): Promise<void> {
  if (await client.promises.exists(`${paths.done}/${job}`)) {
    // Done by an owner that stopped before removing the job: finish its cleanup.
    await client.promises.delete(`${paths.jobs}/${job}`).catch(() => {});
    return;
  }
  const started = Date.now();
  const finished = await sleep(config.jobMs / 2 + Math.random() * config.jobMs, owned.signal);
  if (!finished) {
    report({ type: 'interrupted', job, shard, reason: String(owned.signal.reason?.reason) });
    return;
  }
  try {
    await owned.guard([
      op.create(`${paths.done}/${job}`, `${config.id} token ${owned.fencingToken}`),
    ]);
  } catch (error) {
    if (isZkError(error, 'NodeExists')) {
      report({ type: 'duplicate', job });
      return;
    }
    report({ type: 'interrupted', job, shard, reason: (error as Error).name });
    return;
  }
  await client.promises.delete(`${paths.jobs}/${job}`).catch(() => {});
  report({ type: 'ran', job, shard, token: owned.fencingToken, ms: Date.now() - started });
}

/** Works a shard while owning it: its jobs one after another, until its signal aborts. */
function workShard(shard: string, owned: OwnedItem): void {
  // Tracked on the shard: when it moves, its lock is released once the job in hand stopped.
  owned.runIfOwned((signal) =>
    lastValueFrom(
      jobs$.pipe(
        mergeMap((names) => names),
        filter((job) => shardOf(job, config.shards) === shard),
        distinct(),
        concatMap((job) => runJob(job, shard, owned)),
        takeUntil(fromEvent(signal, 'abort')),
      ),
      { defaultValue: undefined },
    ).catch((error: unknown) => {
      if (!isZkError(error, 'ClientClosed')) report({ type: 'error', message: String(error) });
    }),
  );
}

/** The shards owned now (to say why one went). */
const mine = new Map<string, OwnedItem>();
const membership = partition(client, paths.shards, shards, {
  id: config.id,
  data: `pid ${process.pid}`,
}).subscribe({
  next: (assignment) => {
    const tokens: Record<string, number> = {};
    const reasons: Record<string, string> = {};
    for (const shard of assignment.removed) {
      reasons[shard] = String(mine.get(shard)?.signal.reason?.reason);
      mine.delete(shard);
    }
    for (const shard of assignment.added) {
      const owned = assignment.owned.get(shard) as OwnedItem;
      mine.set(shard, owned);
      tokens[shard] = owned.fencingToken;
      workShard(shard, owned);
    }
    report({
      type: 'shards',
      items: [...assignment.items],
      added: [...assignment.added],
      removed: [...assignment.removed],
      tokens,
      reasons,
    });
  },
  error: (error: unknown) => report({ type: 'error', message: String(error) }),
});

async function shutdown(): Promise<void> {
  report({ type: 'stopping' });
  // Leave the partition first: each shard's signal aborts, and its lock is released once the
  // job in hand has stopped; the client's close waits for those releases, then ends the session.
  membership.unsubscribe();
  const left = [...mine.keys()];
  report({
    type: 'shards',
    items: [],
    added: [],
    removed: left,
    tokens: {},
    reasons: Object.fromEntries(left.map((shard) => [shard, 'left'])),
  });
  mine.clear();
  await client.close();
  // A job that finished as the session closed still reports it: let its report be queued, then
  // exit once the IPC channel has sent everything (messages go out in order).
  await new Promise((resolve) => setImmediate(resolve));
  report({ type: 'stopped' }, () => process.exit(0));
}
process.on('SIGTERM', () => void shutdown());
process.on('disconnect', () => void shutdown());
report({ type: 'ready' });
