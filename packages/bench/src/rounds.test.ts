import { describe, expect, it } from 'vitest';
import { bestRounds, ratioTable, transportRatios } from './rounds';
import type { ResultLine } from './single-run';

const line = (impl: string, scenario: string, round: number, fields: ResultLine): ResultLine => ({
  impl,
  scenario,
  clients: 1,
  ops: 100,
  round,
  ...fields,
});

describe('bestRounds', () => {
  it('keeps the highest ops/s, or the lowest p50 for the floors, in first-seen order', () => {
    const best = bestRounds([
      line('zkrx', 'pipelined-get', 1, { ops_per_s: 100, p50_ms: 5 }),
      line('node-zookeeper-client', 'pipelined-get', 1, { ops_per_s: 90, p50_ms: 6 }),
      line('zkrx', 'floor-create-delete', 1, { ops_per_s: 10, p50_ms: 0.5 }),
      line('zkrx', 'pipelined-get', 2, { ops_per_s: 120, p50_ms: 9 }),
      line('zkrx', 'floor-create-delete', 2, { ops_per_s: 11, p50_ms: 0.6 }),
      line('node-zookeeper-client', 'pipelined-get', 2, { ops_per_s: 80, p50_ms: 4 }),
    ]);
    expect(best.map((row) => [row.impl, row.scenario, row.best_round, row.rounds])).toEqual([
      ['zkrx', 'pipelined-get', 2, 2],
      ['node-zookeeper-client', 'pipelined-get', 1, 2],
      ['zkrx', 'floor-create-delete', 1, 2],
    ]);
  });

  it('takes a failed round only when every round failed', () => {
    const best = bestRounds([
      line('zkrx', 'pipelined-get', 1, { error: 'exit 3' }),
      line('zkrx', 'pipelined-get', 2, { ops_per_s: 5, p50_ms: 1 }),
      line('zkrx', 'pipelined-get', 3, { error: 'exit 1' }),
      line('java', 'floor-create-delete', 1, { error: 'exit 1' }),
    ]);
    expect(best.map((row) => [row.best_round, row.error])).toEqual([
      [2, undefined],
      [1, 'exit 1'],
    ]);
  });
});

describe('transportRatios', () => {
  it('divides zkrx by each peer on the same scenario and client count', () => {
    const ratios = transportRatios([
      line('zkrx', 'pipelined-get', 1, { ops_per_s: 300, p50_ms: 2, client_cpu_us_per_op: 10 }),
      line('node-zookeeper-client', 'pipelined-get', 1, {
        ops_per_s: 200,
        p50_ms: 4,
        client_cpu_us_per_op: 25,
      }),
      line('zkrx', 'floor-create-delete', 1, { ops_per_s: 10, p50_ms: 0.3 }),
      line('zk-floor', 'floor-create-delete', 1, { ops_per_s: 12, p50_ms: 0.4 }),
      line('node-zookeeper-client', 'floor-create-delete', 1, { error: 'exit 1' }),
      line('zkrx', 'herd', 1, { ops_per_s: 1, p50_ms: 1 }),
    ]);
    expect(ratios).toEqual([
      {
        scenario: 'pipelined-get',
        peer: 'node-zookeeper-client',
        opsPerS: 1.5,
        p50: 0.5,
        clientCpu: 0.4,
      },
      {
        scenario: 'floor-create-delete',
        peer: 'zk-floor',
        opsPerS: 0.83,
        p50: 0.75,
        clientCpu: undefined,
      },
    ]);
    expect(ratioTable(ratios).split('\n')[2]).toBe(
      '| pipelined-get | node-zookeeper-client | 1.5× | 0.5× | 0.4× |',
    );
  });

  it('compares zkrx with zkrx-unbatched, never with another transport of itself', () => {
    const ratios = transportRatios([
      line('zkrx', 'pipelined-get', 1, { ops_per_s: 600, p50_ms: 1 }),
      line('zkrx-native', 'pipelined-get', 1, { ops_per_s: 100, p50_ms: 3 }),
      line('zkrx-unbatched', 'pipelined-get', 1, { ops_per_s: 100, p50_ms: 4 }),
    ]);
    expect(ratios.map((ratio) => `${ratio.peer} ${ratio.opsPerS}`)).toEqual([
      'zkrx-unbatched 6',
      'zkrx-unbatched 1',
    ]);
  });
});
