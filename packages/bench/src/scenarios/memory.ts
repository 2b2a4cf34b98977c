/**
 * memory: what a pending acquisition costs. One session holds N locks on N distinct paths; a
 * second session in the same process has N pending `acquire()`s on them (each queued and
 * watching the holder's node: the server's watch count confirms it). Heap and RSS are read
 * after a full GC before the N acquisitions start and once all N wait: the difference / N is
 * the cost of one waiter. Then the holder releases all N at once and the measured phase runs
 * until every waiter has held and released its lock (latency: release call → acquired).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { joinPath, type ZkClient } from '@zkrx/core';
import { acquire, type Lease } from '@zkrx/lock';
import { inBatches, type RunContext, type ScenarioResult } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';

/** The GC: `--expose-gc`'s, or made available at run time. */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function settledMemory(gc: () => void): NodeJS.MemoryUsage {
  gc();
  gc();
  return process.memoryUsage();
}

interface Cycle {
  latencies: Float64Array;
  elapsedMs: number;
  packets: number;
  heapPerWaiter: number;
  rssPerWaiter: number;
  retainedHeapPerWaiter: number;
  enqueueMs: number;
  enqueuePackets: number;
}

async function cycle(
  context: RunContext,
  paths: readonly string[],
  holder: ZkClient,
  waiter: ZkClient,
  label: string,
): Promise<Cycle> {
  const gc = collector();
  const n = paths.length;
  const acquiredAt = new Float64Array(n);
  const releaseAt = new Float64Array(n);
  const latencies = new Float64Array(n);
  const start = settledMemory(gc);

  context.beginPhase(`${label}: holder acquiring`, n);
  let leases: Lease[] = await context.guard(
    Promise.all(
      paths.map((path) =>
        acquire(holder, path).then((lease) => {
          context.tick();
          return lease;
        }),
      ),
    ),
  );
  context.endPhase();
  const baseline = settledMemory(gc);

  const watchesBefore = await context.metric('zk_watch_count');
  context.beginPhase(`${label}: waiters queueing`, n);
  let queued = 0;
  let finished = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const endEnqueue = await context.packetWindow();
  const enqueueFrom = performance.now();
  let polls = 0;
  for (let index = 0; index < n; index++) {
    acquire(waiter, paths[index] as string, {
      onQueued: () => {
        queued += 1;
        context.tick();
      },
    }).then(
      async (lease) => {
        acquiredAt[index] = performance.now();
        await lease.release();
        finished += 1;
        if (finished === n) resolveDone();
      },
      (error: unknown) => {
        context.fail(error);
      },
    );
  }
  const armed = await context.waitUntil(async () => {
    if (queued < n) return false;
    polls += 1;
    return (await context.metric('zk_watch_count')) - watchesBefore >= n;
  }, 60_000);
  const enqueueMs = performance.now() - enqueueFrom;
  const enqueuePackets = (await endEnqueue()) - polls * context.mntrSelfPackets;
  context.endPhase();
  if (!armed) context.log('not every waiter was watching after 60 s');
  const pending = settledMemory(gc);

  context.beginPhase(`${label}: hand-off`, n);
  const endWindow = await context.packetWindow();
  const from = performance.now();
  const releases = leases.map((lease, index) => {
    releaseAt[index] = performance.now();
    return lease.release();
  });
  await context.guard(Promise.all(releases));
  await context.guard(done);
  const elapsedMs = performance.now() - from;
  const packets = await endWindow();
  context.endPhase();
  for (let index = 0; index < n; index++) {
    latencies[index] = (acquiredAt[index] as number) - (releaseAt[index] as number);
  }
  leases = [];
  releases.length = 0;
  const after = settledMemory(gc);
  return {
    latencies,
    elapsedMs,
    packets,
    heapPerWaiter: (pending.heapUsed - baseline.heapUsed) / n,
    rssPerWaiter: (pending.rss - baseline.rss) / n,
    retainedHeapPerWaiter: (after.heapUsed - start.heapUsed) / n,
    enqueueMs,
    enqueuePackets,
  };
}

export const memory: Scenario = {
  name: 'memory',
  summary: 'N pending acquire()s on distinct paths in one process: heap and RSS per waiter',
  defaultClients: 2,
  defaultOps: 10_000,
  warmupFor: (ops) => Math.max(20, Math.floor(ops / 10)),
  warmupHoldMs: 0,
  clientsFor: () => 2,
  async run(context): Promise<ScenarioResult> {
    const { ops, warmup } = context.settings;
    const dir = joinPath(context.base, 'm');
    await context.admin.promises.create(dir);
    const paths = Array.from({ length: Math.max(ops, warmup) }, (_, index) =>
      joinPath(dir, String(index)),
    );
    context.beginPhase('creating lock paths', paths.length);
    await context.guard(
      inBatches(paths, 1_000, async (path) => {
        await context.admin.promises.create(path);
        context.tick();
      }),
    );
    context.endPhase();
    const holder = await context.connect();
    const waiter = await context.connect();
    if (warmup > 0) await cycle(context, paths.slice(0, warmup), holder, waiter, 'warm-up');
    const result = await cycle(context, paths.slice(0, ops), holder, waiter, 'measured');
    return {
      latencies: result.latencies,
      elapsedMs: result.elapsedMs,
      packets: result.packets,
      clients: 2,
      extra: {
        heap_bytes_per_waiter: Math.round(result.heapPerWaiter),
        rss_bytes_per_waiter: Math.round(result.rssPerWaiter),
        retained_heap_bytes_per_waiter: Math.round(result.retainedHeapPerWaiter),
        enqueue_seconds: round(result.enqueueMs / 1000, 3),
        enqueue_packets_per_waiter: round(result.enqueuePackets / ops, 2),
      },
    };
  },
};
