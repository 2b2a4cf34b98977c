/**
 * herd: W waiters (one session each) queue on one lock behind a holder; the measured step is the
 * holder's release, from its release call until the first waiter holds, and the packets the
 * server sends for it. A herd-free lock sends one delete response and one notification whatever
 * W is; a herd lock would notify all W. The rest of the queue then drains (its packets per
 * release reported too). Run with W = 10, 50, 100 to show the count does not grow.
 */
import { joinPath } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import type { ScenarioResult } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

export const herd: Scenario = {
  name: 'herd',
  summary: 'W waiters queued on one lock: server packets per release (must not grow with W)',
  defaultClients: 100,
  defaultOps: 30,
  warmupFor: (ops) => Math.max(2, Math.floor(ops / 4)),
  warmupHoldMs: 0,
  async run(context): Promise<ScenarioResult> {
    const { clients: waiters, warmup, ops } = context.settings;
    const path = joinPath(context.base, 'herd');
    const holder = await context.connect();
    const clients = await context.connectMany(waiters);
    const latencies: number[] = [];
    let measuredMs = 0;
    let packets = 0;
    let drainPackets = 0;
    let holders = 0;
    context.beginPhase('warm-up', warmup);
    for (let index = 0; index < warmup + ops; index++) {
      const measuredRound = index >= warmup;
      if (index === warmup) {
        context.endPhase();
        context.beginPhase('measured', ops);
      }
      const held = await context.guard(acquire(holder, path));
      const watchesBefore = await context.metric('zk_watch_count');
      let queued = 0;
      let acquisitions = 0;
      let finished = 0;
      const first = deferred<number>();
      const gate = deferred<void>();
      const drained = deferred<void>();
      for (const client of clients) {
        acquire(client, path, {
          onQueued: () => {
            queued += 1;
          },
        }).then(
          async (lease) => {
            const at = performance.now();
            holders += 1;
            if (holders !== 1) context.flagViolation(`herd: ${holders} holders at once`);
            acquisitions += 1;
            // The first holder holds until the measured window is closed.
            if (acquisitions === 1) {
              first.resolve(at);
              await gate.promise;
            }
            holders -= 1;
            await lease.release();
            finished += 1;
            if (finished === waiters) drained.resolve();
          },
          (error: unknown) => drained.reject(error),
        );
      }
      // Every waiter queued, and watching its predecessor (the server counts the watches).
      const armed = await context.waitUntil(
        async () =>
          queued === waiters && (await context.metric('zk_watch_count')) - watchesBefore >= waiters,
        10_000,
      );
      if (!armed) context.log(`round ${index}: not every waiter was watching after 10 s`);
      context.progress();

      const endWindow = await context.packetWindow();
      const releaseCall = performance.now();
      await context.guard(held.release());
      const acquiredAt = await context.guard(first.promise);
      const releasePackets = await endWindow();

      const endDrain = await context.packetWindow();
      gate.resolve();
      await context.guard(drained.promise);
      const queuePackets = await endDrain();
      if (measuredRound) {
        latencies.push(acquiredAt - releaseCall);
        measuredMs += acquiredAt - releaseCall;
        packets += releasePackets;
        drainPackets += queuePackets;
      }
      context.tick();
    }
    context.endPhase();
    return {
      latencies,
      elapsedMs: measuredMs,
      packets,
      clients: waiters,
      extra: {
        waiters,
        drain_packets_per_release: round(drainPackets / (ops * waiters), 2),
      },
    };
  },
};
