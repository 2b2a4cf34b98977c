/**
 * One worker of the fleet: stands for leader (the leader hands out jobs) and runs every job it
 * sees under that job's own lock, reporting each step to the demo over IPC.
 */
import { createClient, isZkError } from '@zkrx/core';
import { whileLeader } from '@zkrx/leader';
import { heldLease, mergeMapLocked } from '@zkrx/lock';
import {
  concatMap,
  defer,
  distinct,
  EMPTY,
  finalize,
  from,
  interval,
  mergeMap,
  takeWhile,
} from 'rxjs';
import type { FleetEvent, WorkerConfig } from './protocol';
import { fleetPaths, jobName } from './protocol';

const config = JSON.parse(process.env.ZKRX_WORKER ?? '{}') as WorkerConfig;
const paths = fleetPaths(config.root);

function report(event: FleetEvent, sent: () => void = () => {}): void {
  if (process.connected) process.send?.({ ...event, worker: config.id, at: Date.now() }, sent);
  else sent();
}

const client = createClient({ connect: config.connect, sessionTimeoutMs: config.sessionTimeoutMs });
client.session$.subscribe(({ state }) => {
  if (state !== 'connecting') report({ type: 'session', state });
});

/** The leader's work: issue the next job every `issueEveryMs` until all are issued. */
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

/** Runs one job (already holding its lock): skip it if done, else do it and mark it done. */
async function runJob(job: string): Promise<void> {
  if (await client.promises.exists(`${paths.done}/${job}`)) {
    // Done by a worker that died before it could remove the job: finish its cleanup.
    await client.promises.delete(`${paths.jobs}/${job}`).catch(() => {});
    return;
  }
  const started = Date.now();
  await new Promise((resolve) =>
    setTimeout(resolve, config.jobMs / 2 + Math.random() * config.jobMs),
  );
  const token = heldLease(client, `${paths.locks}/${job}`)?.fencingToken ?? -1;
  try {
    await client.promises.create(`${paths.done}/${job}`, `${config.id} token ${token}`);
  } catch (error) {
    if (isZkError(error, 'NodeExists')) {
      report({ type: 'duplicate', job });
      return;
    }
    throw error;
  }
  await client.promises.delete(`${paths.jobs}/${job}`).catch(() => {});
  report({ type: 'ran', job, token, ms: Date.now() - started });
}

client
  .watchChildren(paths.jobs)
  .pipe(
    mergeMap((jobs) => from(jobs)),
    distinct(),
    mergeMapLocked(
      (job) => `${paths.locks}/${job}`,
      (job) => runJob(job),
      { client, concurrency: 2 },
    ),
  )
  .subscribe({
    error: (error: unknown) => {
      // Closing the client ends the lock waits too: that is the shutdown, not an error.
      if (!isZkError(error, 'ClientClosed')) report({ type: 'error', message: String(error) });
    },
  });

async function shutdown(): Promise<void> {
  report({ type: 'stopping' });
  await client.close();
  // A job that finished as the session closed still reports it: let its report be queued, then
  // exit once the IPC channel has sent everything (messages go out in order).
  await new Promise((resolve) => setImmediate(resolve));
  report({ type: 'stopped' }, () => process.exit(0));
}
process.on('SIGTERM', () => void shutdown());
process.on('disconnect', () => void shutdown());
report({ type: 'ready' });
