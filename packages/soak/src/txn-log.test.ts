import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { records, txn, txnLogFile } from '../test/txn-builder';
import { buildTruth } from './truth';
import { OpCode, parseTxnLog, readQuorumLog } from './txn-log';

describe('parseTxnLog', () => {
  it('reads creates, deletes, container reaps, session closes and multis, with zxid, session and time', () => {
    const file = txnLogFile([
      txn.container(0x100000001, 1_000, '1', '/r/lock'),
      txn.create(0x100000002, 1_001, '1', '/r/lock/_c_a-lock-0000000000'),
      {
        zxid: 0x100000003,
        time: 1_002,
        session: '2',
        type: OpCode.multi,
        record: records.multi([
          { type: OpCode.create2, record: records.create('/r/lock/_c_b-lock-0000000001', true) },
          { type: OpCode.error, record: Buffer.from([0, 0, 0, 0]) },
        ]),
      },
      txn.delete(0x100000004, 1_003, '1', '/r/lock/_c_a-lock-0000000000'),
      txn.close(0x100000005, 1_004, 'ffffffffffffffff', ['/r/lock/_c_b-lock-0000000001']),
      txn.reap(0x100000006, 1_005, '/r/lock'),
    ]);
    const txns = parseTxnLog(file);
    expect(txns.map((t) => [t.zxid, t.session, t.time])).toEqual([
      [0x100000001, '1', 1_000],
      [0x100000002, '1', 1_001],
      [0x100000003, '2', 1_002],
      [0x100000004, '1', 1_003],
      [0x100000005, 'ffffffffffffffff', 1_004],
      [0x100000006, '0', 1_005],
    ]);
    expect(txns.map((t) => t.ops)).toEqual([
      [{ op: 'create', path: '/r/lock', ephemeral: false, container: true }],
      [{ op: 'create', path: '/r/lock/_c_a-lock-0000000000', ephemeral: true, container: false }],
      [{ op: 'create', path: '/r/lock/_c_b-lock-0000000001', ephemeral: true, container: false }],
      [{ op: 'delete', path: '/r/lock/_c_a-lock-0000000000', container: false }],
      [{ op: 'close-session', paths: ['/r/lock/_c_b-lock-0000000001'] }],
      [{ op: 'delete', path: '/r/lock', container: true }],
    ]);
  });

  it('stops at a torn last entry and refuses a file that is not a log', () => {
    const file = txnLogFile([txn.create(1, 1, '1', '/a'), txn.create(2, 2, '1', '/b')], {
      tornLast: true,
    });
    expect(parseTxnLog(file).map((t) => t.zxid)).toEqual([1]);
    expect(() => parseTxnLog(Buffer.from('not a log at all'))).toThrow('not a ZooKeeper txn log');
  });
});

describe('readQuorumLog', () => {
  it('keeps the transactions at least a quorum of members logged, in zxid order', () => {
    const base = mkdtempSync(join(tmpdir(), 'zkrx-soak-txn-'));
    try {
      const member = (name: string, files: Record<string, Buffer>) => {
        const dir = join(base, name, 'version-2');
        mkdirSync(dir, { recursive: true });
        for (const [file, bytes] of Object.entries(files)) writeFileSync(join(dir, file), bytes);
        return join(base, name);
      };
      const a = txn.create(1, 1, '1', '/a');
      const b = txn.create(2, 2, '1', '/b');
      const c = txn.create(3, 3, '1', '/c');
      const lone = txn.create(4, 4, '1', '/lone');
      const dirs = [
        member('s1', { 'log.1': txnLogFile([a, b]), 'log.3': txnLogFile([c, lone]) }),
        member('s2', { 'log.1': txnLogFile([a, b, c]) }),
        member('s3', { 'log.2': txnLogFile([b]) }),
      ];
      const { txns, unconfirmed } = readQuorumLog(dirs, 2);
      expect(txns.map((t) => t.zxid)).toEqual([1, 2, 3]);
      expect(unconfirmed).toBe(1);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('buildTruth', () => {
  it('replays lives under the root: creator, czxid, how each ended', () => {
    const txns = parseTxnLog(
      txnLogFile([
        txn.create(1, 100, 'a', '/other/x'),
        txn.container(2, 101, 'a', '/r/p'),
        txn.create(3, 102, 'a', '/r/p/n1'),
        txn.create(4, 103, 'b', '/r/p/n2'),
        txn.delete(5, 104, 'a', '/r/p/n1'),
        txn.close(6, 105, 'b', ['/r/p/n2', '/other/y']),
        txn.reap(7, 106, '/r/p'),
        txn.container(8, 107, 'c', '/r/p'),
      ]),
    );
    const truth = buildTruth(txns, '/r');
    expect(truth.lives.map((life) => life.path)).toEqual(['/r/p', '/r/p/n1', '/r/p/n2', '/r/p']);
    const [first, n1, n2, second] = truth.lives;
    expect(n1).toMatchObject({
      czxid: 3,
      session: 'a',
      deleted: 104,
      deletedBy: 'delete',
      deleterSession: 'a',
    });
    expect(n2).toMatchObject({ czxid: 4, session: 'b', deleted: 105, deletedBy: 'session-close' });
    expect(first).toMatchObject({ container: true, deletedBy: 'container-reaper' });
    expect(second?.deleted).toBeUndefined();
    expect(truth.byPath.get('/r/p')).toHaveLength(2);
    expect(truth.childrenOf.get('/r/p')?.map((life) => life.name)).toEqual(['n1', 'n2']);
    expect(truth.containersReaped).toBe(1);
    expect(truth.sessionCloses.get('b')).toBe(105);
    expect(truth.anomalies).toEqual([]);
  });
});
