import { describe, expect, it } from 'vitest';
import { chartSvg } from './chart';
import type { ResultLine } from './single-run';
import { markdownTable } from './table';

const lines: ResultLine[] = [
  {
    impl: 'zkrx',
    scenario: 'mutex-contended',
    clients: 8,
    ops: 2000,
    seconds: 1.5,
    ops_per_s: 1333.3,
    p50_ms: 4.4,
    p99_ms: 16.8,
    server_packets_sent_per_op: 5,
    handoff_p50_ms: 0.5,
    handoff_p99_ms: 5.5,
  },
  {
    impl: 'zkrx',
    scenario: 'rwlock-mixed',
    clients: 8,
    ops: 1500,
    ops_per_s: 1445,
    p50_ms: 3.9,
    p99_ms: 12.9,
    server_packets_sent_per_op: 6.43,
    read_p50_ms: 3.9,
    write_p50_ms: 3.7,
    max_concurrent_readers: 7,
  },
  { impl: 'zkrx', scenario: 'semaphore', clients: 32, ops: 1000, error: 'exit 3: STALLED: no op' },
];

describe('markdownTable', () => {
  it('has the columns of the peers table.py', () => {
    const rows = markdownTable(lines).split('\n');
    expect(rows[0]).toBe(
      '| scenario | C | impl | ops | ops/s | p50 ms | p99 ms | handoff p50/p99 ms | srv pkts/op | notes |',
    );
    expect(rows[2]).toBe(
      '| mutex-contended | 8 | zkrx | 2000 | 1333.3 | 4.4 | 16.8 | 0.5 / 5.5 | 5 |  |',
    );
    expect(rows[3]).toContain('max readers 7, read/write p50 3.9/3.7 ms');
    expect(rows[4]).toContain('**FAILED** exit 3: STALLED');
  });
});

describe('chartSvg', () => {
  it('draws one ops/s bar and one p50 bar per result, and marks failures', () => {
    const svg = chartSvg(lines, ['a <caption>', 'second line']);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<rect x=/g)).toHaveLength(4);
    expect(svg).toContain('mutex-contended C=8');
    expect(svg).toContain('<title>');
    expect(svg).toContain('a &#60;caption&#62;');
    expect(svg.match(/>failed</g)).toHaveLength(2);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
  });
});
