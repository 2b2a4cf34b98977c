/**
 * pipelined-get: one session keeps K `get`s of one small node in flight (`--in-flight`, 256),
 * each reply starting the next request in its own callback, until N replies came. The client's
 * throughput, its CPU per call (`process.cpuUsage`, user + system, every thread of the process),
 * the server's when it runs here, and how the client batched: replies per socket read, requests
 * per socket write, the event loop's utilization.
 */
import { performance } from 'node:perf_hooks';
import { joinPath } from '@zkrx/core';
import { type IoCounts, ioDelta, ioFields, traceClientSockets } from '../io-trace';
import type { ScenarioResult } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';
import { round } from '../stats';

/** The node's data: a small value, as a configuration flag or a lock's owner would be. */
const DATA = Buffer.from('pipelined-get-data');

export const pipelinedGet: Scenario = {
  name: 'pipelined-get',
  summary: '1 session, K gets in flight (default 256): ops/s and client CPU per call',
  defaultClients: 1,
  defaultOps: 50_000,
  warmupFor: quarterWarmup,
  warmupHoldMs: 0,
  clientsFor: () => 1,
  async run(context): Promise<ScenarioResult> {
    const path = joinPath(context.base, 'node');
    await context.admin.promises.create(path, DATA);
    const io = traceClientSockets();
    const client = await context.connectRaw();
    let before: IoCounts | undefined;
    let after: IoCounts | undefined;
    let loop = performance.eventLoopUtilization();
    const measured = await context.measurePipelined(
      context.settings.inFlight,
      (ticket, done) => client.get(path, ticket, done),
      () => {
        before = io.read();
        loop = performance.eventLoopUtilization();
      },
      () => {
        after = io.read();
        loop = performance.eventLoopUtilization(loop);
      },
    );
    const counts = before && after ? ioDelta(before, after) : undefined;
    return {
      ...measured,
      clients: 1,
      extra: {
        in_flight: context.settings.inFlight,
        ...(counts ? ioFields(counts, context.settings.ops) : {}),
        event_loop_utilization: round(loop.utilization, 3),
      },
    };
  },
};
