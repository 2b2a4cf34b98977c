/**
 * The floors: raw round trips on one session, the lower bound of every recipe (create+delete of
 * an ephemeral sequential node; getChildren of a one-child node), through zkrx's promises or
 * node-zookeeper-client's calls (`--impl`).
 */
import { joinPath } from '@zkrx/core';
import type { RunContext, ScenarioResult, Worker } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';

async function runFloor(context: RunContext, kind: 'create-delete' | 'getchildren') {
  const dir = joinPath(context.base, 'f');
  await context.admin.promises.create(dir);
  await context.admin.promises.create(joinPath(dir, 'child'));
  const client = await context.connectRaw();
  const prefix = joinPath(dir, 'n-');
  const worker: Worker =
    kind === 'create-delete'
      ? async () => {
          const start = performance.now();
          const created = await client.createEphemeralSequential(prefix);
          await client.delete(created);
          return performance.now() - start;
        }
      : async () => {
          const start = performance.now();
          const children = await client.children(dir);
          if (children.length !== 1) throw new Error(`bad child count ${children.length}`);
          return performance.now() - start;
        };
  const measured = await context.measure([worker]);
  return { ...measured, clients: 1 } satisfies ScenarioResult;
}

export const floorCreateDelete: Scenario = {
  name: 'floor-create-delete',
  summary: 'raw create (ephemeral sequential) + delete, 1 session',
  defaultClients: 1,
  defaultOps: 2000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 0,
  clientsFor: () => 1,
  run: (context) => runFloor(context, 'create-delete'),
};

export const floorGetChildren: Scenario = {
  name: 'floor-getchildren',
  summary: 'raw getChildren of a one-child node, 1 session',
  defaultClients: 1,
  defaultOps: 4000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 0,
  clientsFor: () => 1,
  run: (context) => runFloor(context, 'getchildren'),
};
