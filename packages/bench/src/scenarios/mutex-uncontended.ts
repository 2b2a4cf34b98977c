/**
 * mutex-uncontended: one session acquires and releases one lock N times, in the run's form
 * (`--form`); latency is one acquire+release (the floor is one create+list round trip, then one
 * delete).
 */
import { joinPath } from '@zkrx/core';
import { acquire, mutex } from '@zkrx/lock';
import { leaseTaker } from '../lease-forms';
import type { ScenarioResult } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';
import { blockForSelfTest } from '../self-tests';

export const mutexUncontended: Scenario = {
  name: 'mutex-uncontended',
  summary: '1 session: acquire + release; latency = one acquire+release',
  defaultClients: 1,
  defaultOps: 2000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 2,
  clientsFor: () => 1,
  async run(context): Promise<ScenarioResult> {
    const path = joinPath(context.base, 'lock');
    const client = await context.connect();
    await blockForSelfTest(context, path);
    const take = leaseTaker(context.settings, { acquire, observe: mutex });
    const measured = await context.measure([
      async () => {
        const start = performance.now();
        const held = await take(client, path, {});
        await context.hold();
        await held.release();
        return performance.now() - start;
      },
    ]);
    return { ...measured, clients: 1 };
  },
};
