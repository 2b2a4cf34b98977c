/**
 * mutex-uncontended: one session acquires and releases one lock N times; latency is one
 * acquire+release (the floor is one create+list round trip, then one delete).
 */
import { joinPath } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
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
    const measured = await context.measure([
      async () => {
        const start = performance.now();
        const lease = await acquire(client, path);
        await context.hold();
        await lease.release();
        return performance.now() - start;
      },
    ]);
    return { ...measured, clients: 1 };
  },
};
