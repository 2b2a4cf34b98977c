/**
 * mutex-contended: C sessions (or C workers of one client, `--one-client`) loop acquire → release
 * on one lock until N acquisitions, each lease taken in the run's form (`--form`); latency runs
 * from the acquire call until held, hand-off from a holder's release call to the next holder's
 * acquisition. Two holders at once end the run (exit 2).
 */
import { joinPath } from '@zkrx/core';
import { acquire, mutex } from '@zkrx/lock';
import { acquireRead, readLock } from '@zkrx/rwlock';
import { leaseTaker } from '../lease-forms';
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
    const take = leaseTaker(
      context.settings,
      selfTestBroken ? { acquire: acquireRead, observe: readLock } : { acquire, observe: mutex },
    );
    const clients = await context.connectMany(count);
    await blockForSelfTest(context, path);
    let holders = 0;
    let lastReleaseCall = 0;
    const handoffs: number[] = [];
    const workers = clients.map<Worker>((client) => async () => {
      const start = performance.now();
      const held = await take(client, path, {});
      const got = performance.now();
      holders += 1;
      if (holders !== 1) context.violated(`mutex: ${holders} holders at once`);
      if (lastReleaseCall !== 0) handoffs.push(got - lastReleaseCall);
      await (selfTestBroken ? context.holdUntilFailure() : context.hold());
      holders -= 1;
      lastReleaseCall = performance.now();
      await held.release();
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
