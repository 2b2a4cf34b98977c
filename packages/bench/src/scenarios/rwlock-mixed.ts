/**
 * rwlock-mixed: C sessions on one read-write lock, global ticket t writes when t % 5 == 4 (20%
 * writes, as the peers); a writer beside any other holder, or a reader beside a writer, ends
 * the run (exit 2).
 */
import { joinPath } from '@zkrx/core';
import { acquireRead, acquireWrite, readLock, writeLock } from '@zkrx/rwlock';
import { leaseTaker } from '../lease-forms';
import type { ScenarioResult, Worker } from '../run-context';
import { quarterWarmup, type Scenario } from '../scenario';
import { blockForSelfTest } from '../self-tests';
import { ms, percentile } from '../stats';

export const rwlockMixed: Scenario = {
  name: 'rwlock-mixed',
  summary: 'C sessions, 80% reads / 20% writes (ticket % 5 == 4 writes); latency = call to held',
  defaultClients: 8,
  defaultOps: 1500,
  warmupFor: quarterWarmup,
  warmupHoldMs: 2,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, selfTestBroken } = context.settings;
    const path = joinPath(context.base, 'rw');
    const clients = await context.connectMany(count);
    await blockForSelfTest(context, path, acquireWrite);
    const takeRead = leaseTaker(context.settings, { acquire: acquireRead, observe: readLock });
    const takeWrite = leaseTaker(context.settings, { acquire: acquireWrite, observe: writeLock });
    let readers = 0;
    let writers = 0;
    let maxReaders = 0;
    const readLatencies: number[] = [];
    const writeLatencies: number[] = [];
    const workers = clients.map<Worker>((client) => async (ticket) => {
      const write = ticket % 5 === 4;
      // The self-test lets writers take the read lock: the check must catch it.
      const take = write && !selfTestBroken ? takeWrite : takeRead;
      const start = performance.now();
      const held = await take(client, path, {});
      const latency = performance.now() - start;
      if (writers > 0 || (write && readers > 0)) {
        context.violated(
          `rwlock: a ${write ? 'writer' : 'reader'} beside ${writers} writer(s) and ${readers} reader(s)`,
        );
      }
      if (write) writers += 1;
      else {
        readers += 1;
        maxReaders = Math.max(maxReaders, readers);
      }
      // The self-test's writer stays: the next reader must be caught beside it.
      await (write && selfTestBroken ? context.holdUntilFailure() : context.hold());
      if (write) writers -= 1;
      else readers -= 1;
      await held.release();
      (write ? writeLatencies : readLatencies).push(latency);
      return latency;
    });
    const measured = await context.measure(workers, () => {
      readLatencies.length = 0;
      writeLatencies.length = 0;
    });
    return {
      ...measured,
      clients: count,
      extra: {
        read_p50_ms: ms(percentile(readLatencies, 50)),
        write_p50_ms: ms(percentile(writeLatencies, 50)),
        max_concurrent_readers: maxReaders,
      },
    };
  },
};
