/**
 * semaphore: C sessions (or C workers of one client, `--one-client`) share 4 leases (Curator's InterProcessSemaphoreV2 layout); more than 4
 * holders at once end the run (exit 2); the warm-up holds 20 ms so that all 4 leases fill up.
 */
import { joinPath } from '@zkrx/core';
import { acquireSemaphore, semaphore as semaphoreLease } from '@zkrx/lock';
import { leaseTaker } from '../lease-forms';
import type { ScenarioResult, Worker } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';

const LEASES = 4;

export const semaphore: Scenario = {
  name: 'semaphore',
  summary: `C sessions share ${LEASES} leases; latency = acquire call to held`,
  defaultClients: 8,
  defaultOps: 1000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 20,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, selfTestBroken } = context.settings;
    const path = joinPath(context.base, 'sem');
    // The self-test hands out twice the leases the check allows: it must catch it.
    const leases = selfTestBroken ? LEASES * 2 : LEASES;
    const clients = await context.connectMany(count);
    const take = leaseTaker(context.settings, {
      acquire: acquireSemaphore,
      observe: semaphoreLease,
    });
    let holders = 0;
    let maxHolders = 0;
    const workers = clients.map<Worker>((client) => async () => {
      const start = performance.now();
      const held = await take(client, path, { leases });
      const latency = performance.now() - start;
      holders += 1;
      if (holders > LEASES) context.violated(`semaphore: ${holders} holders > ${LEASES} leases`);
      maxHolders = Math.max(maxHolders, holders);
      await (selfTestBroken ? context.holdUntilFailure() : context.hold());
      holders -= 1;
      await held.release();
      return latency;
    });
    const measured = await context.measure(workers);
    return { ...measured, clients: count, extra: { max_concurrent_holders: maxHolders } };
  },
};
