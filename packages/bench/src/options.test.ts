import { describe, expect, it } from 'vitest';
import { selectMatrix } from './matrix';
import { parseOptions, UsageError } from './options';

describe('parseOptions', () => {
  it('takes the peers command line', () => {
    const options = parseOptions([
      '--connect',
      '127.0.0.1:2191',
      '--scenario',
      'mutex-contended',
      '--clients',
      '8',
      '--ops',
      '2000',
    ]);
    expect(options).toMatchObject({
      connect: '127.0.0.1:2191',
      scenarios: ['mutex-contended'],
      clients: 8,
      ops: 2000,
      warmup: undefined,
      stallSeconds: 10,
      selfTestBroken: false,
    });
  });

  it('refuses what the peers would refuse', () => {
    expect(() => parseOptions(['--scenario', 'nope'])).toThrow(UsageError);
    expect(() => parseOptions(['--clients', '0'])).toThrow(UsageError);
    expect(() => parseOptions(['--ops', '1.5'])).toThrow(UsageError);
    expect(() => parseOptions(['--frobnicate'])).toThrow(UsageError);
    expect(() => parseOptions(['--connect', 'localhost'])).toThrow(UsageError);
  });
});

describe('selectMatrix', () => {
  it('runs every scenario by default, with the peers op counts', () => {
    const matrix = selectMatrix(parseOptions([]));
    expect(new Set(matrix.map((entry) => entry.scenario)).size).toBe(9);
    expect(matrix).toContainEqual({ scenario: 'mutex-contended', clients: 32, ops: 2000 });
    expect(
      matrix.filter((entry) => entry.scenario === 'herd').map((entry) => entry.clients),
    ).toEqual([10, 50, 100]);
  });

  it('filters, overrides and scales', () => {
    expect(selectMatrix(parseOptions(['--scenario', 'semaphore', '--scale', '0.1']))).toEqual([
      { scenario: 'semaphore', clients: 1, ops: 100 },
      { scenario: 'semaphore', clients: 8, ops: 100 },
      { scenario: 'semaphore', clients: 32, ops: 100 },
    ]);
    expect(
      selectMatrix(parseOptions(['--scenario', 'rwlock-mixed', '--clients', '4', '--ops', '50'])),
    ).toEqual([{ scenario: 'rwlock-mixed', clients: 4, ops: 50 }]);
  });
});
