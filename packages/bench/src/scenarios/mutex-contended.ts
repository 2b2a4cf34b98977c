/**
 * mutex-contended: C sessions loop acquire → release on one lock until N acquisitions; latency
 * runs from the acquire call until held, hand-off from a holder's release call to the next
 * holder's acquisition. Two holders at once end the run (exit 2).
 */
import { joinPath } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { acquireRead } from '@zkrx/rwlock';
import type { ScenarioResult, Worker } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';
import { blockForSelfTest } from '../self-tests';
import { ms, percentile } from '../stats';

export const mutexContended: Scenario = {
  name: 'mutex-contended',
  summary: 'C sessions loop acquire → release on one lock; latency = acquire call to held',
  defaultClients: 8,
  defaultOps: 2000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 2,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, selfTestBroken } = context.settings;
    const path = joinPath(context.base, 'lock');
    // The self-test swaps in a read lock, which excludes nobody: the check must catch it.
    const take = selfTestBroken ? acquireRead : acquire;
    const clients = await context.connectMany(count);
    await blockForSelfTest(context, path);
    let holders = 0;
    let lastReleaseCall = 0;
    const handoffs: number[] = [];
    const workers = clients.map<Worker>((client) => async () => {
      const start = performance.now();
      const lease = await take(client, path);
      const got = performance.now();
      holders += 1;
      if (holders !== 1) context.violated(`mutex: ${holders} holders at once`);
      if (lastReleaseCall !== 0) handoffs.push(got - lastReleaseCall);
      await (selfTestBroken ? context.holdUntilFailure() : context.hold());
      holders -= 1;
      lastReleaseCall = performance.now();
      await lease.release();
      return got - start;
    });
    const measured = await context.measure(workers, () => {
      lastReleaseCall = 0;
      handoffs.length = 0;
    });
    return {
      ...measured,
      clients: count,
      extra: {
        handoff_p50_ms: ms(percentile(handoffs, 50)),
        handoff_p99_ms: ms(percentile(handoffs, 99)),
      },
    };
  },
};
