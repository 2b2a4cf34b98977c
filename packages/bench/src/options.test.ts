import { describe, expect, it } from 'vitest';
import { fleetItems, memberId } from './fleet-host';
import { childCommand, selectMatrix } from './matrix';
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

  it('takes the peer client for the raw scenarios only', () => {
    expect(
      parseOptions(['--scenario', 'pipelined-get', '--impl', 'node-zookeeper-client']),
    ).toMatchObject({ impl: 'node-zookeeper-client', inFlight: 256, rounds: 1, peers: undefined });
    expect(parseOptions(['--in-flight', '64', '--rounds', '3'])).toMatchObject({
      impl: 'zkrx',
      inFlight: 64,
      rounds: 3,
    });
    expect(() =>
      parseOptions(['--scenario', 'mutex-contended', '--impl', 'node-zookeeper-client']),
    ).toThrow(/runs floor-create-delete, floor-getchildren, pipelined-get only/);
    expect(() => parseOptions(['--impl', 'curator'])).toThrow(UsageError);
    expect(() => parseOptions(['--peers', 'kazoo'])).toThrow(UsageError);
    expect(() => parseOptions(['--rounds', '0'])).toThrow(UsageError);
    expect(parseOptions(['--peers', '']).peers).toEqual([]);
  });
});

describe('selectMatrix', () => {
  it('runs every scenario by default, with the peers op counts', () => {
    const matrix = selectMatrix(parseOptions([]));
    expect(new Set(matrix.map((entry) => entry.scenario)).size).toBe(10);
    expect(matrix).toContainEqual({
      scenario: 'mutex-contended',
      clients: 32,
      ops: 2000,
      impl: 'zkrx',
    });
    expect(
      matrix.filter((entry) => entry.scenario === 'herd').map((entry) => entry.clients),
    ).toEqual([10, 50, 100]);
  });

  it('filters, overrides and scales', () => {
    expect(selectMatrix(parseOptions(['--scenario', 'semaphore', '--scale', '0.1']))).toEqual([
      { scenario: 'semaphore', clients: 1, ops: 100, impl: 'zkrx' },
      { scenario: 'semaphore', clients: 8, ops: 100, impl: 'zkrx' },
      { scenario: 'semaphore', clients: 32, ops: 100, impl: 'zkrx' },
      {
        scenario: 'semaphore',
        clients: 32,
        ops: 100,
        impl: 'zkrx',
        args: ['--form', 'observable'],
      },
    ]);
    expect(
      selectMatrix(parseOptions(['--scenario', 'rwlock-mixed', '--clients', '4', '--ops', '50'])),
    ).toEqual([{ scenario: 'rwlock-mixed', clients: 4, ops: 50, impl: 'zkrx' }]);
  });

  it('runs the peers of each transport scenario right after zkrx, unless --peers says otherwise', () => {
    const impls = (argv: string[]) =>
      selectMatrix(parseOptions(argv)).map((entry) => `${entry.scenario} ${entry.impl}`);
    expect(impls(['--scenario', 'floor-create-delete,pipelined-get'])).toEqual([
      'floor-create-delete zkrx',
      'floor-create-delete java',
      'floor-create-delete node-zookeeper-client',
      'pipelined-get zkrx',
      'pipelined-get node-zookeeper-client',
      'pipelined-get zkrx-unbatched',
    ]);
    expect(impls(['--scenario', 'floor-create-delete', '--peers', 'java'])).toEqual([
      'floor-create-delete zkrx',
      'floor-create-delete java',
    ]);
    expect(impls(['--scenario', 'pipelined-get', '--peers', ''])).toEqual(['pipelined-get zkrx']);
  });

  it('runs the lock forms users write and one client as rows of their own', () => {
    const rows = selectMatrix(parseOptions(['--scenario', 'mutex-contended'])).map((entry) =>
      `${entry.clients} ${entry.args?.join(' ') ?? ''}`.trim(),
    );
    expect(rows).toEqual([
      '8',
      '32',
      '8 --form observable',
      '32 --form observable',
      '8 --form signal',
      '32 --form signal',
      '8 --one-client',
      '32 --one-client',
      '32 --form observable --one-client',
    ]);
    expect(
      parseOptions(['--form', 'signal', '--one-client', '--timeout-ms', '60000']),
    ).toMatchObject({ form: 'signal', oneClient: true, timeoutMs: 60_000 });
    expect(() => parseOptions(['--form', 'nope'])).toThrow(UsageError);
  });
});

describe('childCommand', () => {
  const options = parseOptions(['--in-flight', '64']);
  const entry = { scenario: 'pipelined-get', clients: 1, ops: 1000 } as const;

  it('runs zkrx and node-zookeeper-client through this CLI, in a fresh process', () => {
    const zkrx = childCommand('h:1', { ...entry, impl: 'zkrx' }, options, undefined);
    expect(zkrx[0]).toBe(process.execPath);
    expect(zkrx.slice(3)).toEqual([
      '--connect',
      'h:1',
      '--scenario',
      'pipelined-get',
      '--clients',
      '1',
      '--ops',
      '1000',
      '--stall-s',
      '10',
      '--in-flight',
      '64',
    ]);
    const peer = childCommand('h:1', { ...entry, impl: 'node-zookeeper-client' }, options, '/p');
    expect(peer.slice(-4)).toEqual(['--impl', 'node-zookeeper-client', '--in-flight', '64']);
  });

  it('runs the Java floor from the peers folder', () => {
    const java = childCommand(
      'h:1',
      { scenario: 'floor-create-delete', clients: 1, ops: 10, impl: 'java' },
      options,
      '/p',
    );
    expect(java[0]).toBe('java');
    expect(java[3]).toBe('/p/CuratorBench.java');
    expect(() =>
      childCommand(
        'h:1',
        { scenario: 'floor-create-delete', clients: 1, ops: 10, impl: 'java' },
        options,
        undefined,
      ),
    ).toThrow(/CuratorBench/);
  });
});

describe('--name-bytes', () => {
  it('pads item names and member ids to that many bytes, sorted as numbered, and reaches the run', () => {
    const options = parseOptions(['--scenario', 'fleet-scale', '--name-bytes', '255']);
    expect(options.nameBytes).toBe(255);
    const items = fleetItems(3, options.nameBytes);
    expect(items.map((item) => Buffer.byteLength(item))).toEqual([255, 255, 255]);
    expect([...items].sort()).toEqual(items);
    expect(items[1]).toMatch(/^item-00001-x+$/);
    expect(Buffer.byteLength(memberId(7, 255))).toBe(255);
    expect(fleetItems(2)).toEqual(['item-00000', 'item-00001']);
    const child = childCommand(
      'h:1',
      { scenario: 'fleet-scale', clients: 2, ops: 10, impl: 'zkrx' },
      options,
      undefined,
    );
    expect(child.join(' ')).toContain('--name-bytes 255');
  });
});
