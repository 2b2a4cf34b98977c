/**
 * pipelined-get: one session keeps K `get`s of one node in flight (`--in-flight`, 256; the data
 * 18 bytes, or `--data-bytes`), each reply starting the next request in its own callback, until
 * N replies came. The client's throughput, its CPU per call (`process.cpuUsage`, user + system,
 * every thread of the process), the server's when it runs here, and how the client batched:
 * replies per socket read, requests per socket write, the event loop's utilization.
 */
import { performance } from 'node:perf_hooks';
import { joinPath } from '@zkrx/core';
import { type IoCounts, ioDelta, ioFields, traceClientSockets } from '../io-trace';
import type { ScenarioResult } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';
import { round } from '../stats';

/** The node's data by default: a small value, as a configuration flag or a lock's owner. */
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
    const { dataBytes } = context.settings;
    await context.admin.promises.create(
      path,
      dataBytes === undefined ? DATA : Buffer.alloc(dataBytes, 'x'),
    );
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
        data_bytes: dataBytes ?? DATA.length,
        ...(counts ? ioFields(counts, context.settings.ops) : {}),
        event_loop_utilization: round(loop.utilization, 3),
      },
    };
  },
};
