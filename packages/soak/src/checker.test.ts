import { describe, expect, it } from 'vitest';
import { type TxnSpec, txn, txnLogFile } from '../test/txn-builder';
import { type CheckInput, check } from './checker';
import type { CheckedHold, FaultRecord } from './history';
import type { RegisterWrite } from './register';
import { buildTruth } from './truth';
import { parseTxnLog } from './txn-log';

const P = '/r/lock';
const node = (name: string) => `${P}/_c_${name}-lock-${name.padStart(10, '0')}`;
const reader = (name: string) => `${P}/_c_${name}-__READ__${name.padStart(10, '0')}`;
const writer = (name: string) => `${P}/_c_${name}-__WRIT__${name.padStart(10, '0')}`;

let holdCount = 0;
function hold(
  worker: number,
  path: string,
  czxid: number,
  acquiredAt: number,
  endedAt: number,
  extra: Partial<CheckedHold> = {},
): CheckedHold {
  holdCount += 1;
  return {
    holdId: `h${holdCount}`,
    group: `g${holdCount}`,
    worker,
    resource: P,
    kind: 'exclusive',
    node: path,
    token: czxid,
    sessionId: `a${worker}`,
    attemptAt: acquiredAt - 1,
    acquiredAt,
    endedAt,
    end: 'released',
    reason: undefined,
    uncertainty: 0,
    ...extra,
  };
}

function run(
  specs: TxnSpec[],
  holds: CheckedHold[],
  extra: Partial<CheckInput> = {},
): ReturnType<typeof check> {
  const truth = buildTruth(parseTxnLog(txnLogFile(specs)), '/r');
  return check({
    sessionTimeoutMs: 1_000,
    leases: 1,
    holds,
    writes: [],
    faults: [],
    truth,
    wallOffset: 0,
    crashes: [],
    leftovers: [],
    noProgress: [],
    ...extra,
  });
}

const kinds = (report: ReturnType<typeof check>) =>
  report.violations.map((violation) => violation.kind);

function fault(
  kind: FaultRecord['kind'],
  target: number | undefined,
  start: number,
  end = start,
): FaultRecord {
  return {
    id: start,
    kind,
    target,
    start,
    healedAt: end,
    lossReference: kind === 'stall' ? end : start,
    detail: '',
  };
}

function write(
  holdId: string,
  token: number,
  at: number,
  accepted: boolean,
  worker = 0,
): RegisterWrite {
  return { resource: P, token, holdId, worker, at, accepted, highestBefore: undefined };
}

describe('check: admission against ZooKeeper', () => {
  it('passes holds taken one after the other', () => {
    const report = run(
      [
        txn.container(1, 0, 'a0', P),
        txn.create(2, 10, 'a0', node('0')),
        txn.create(3, 12, 'a1', node('1')),
        txn.delete(4, 30, 'a0', node('0')),
        txn.delete(5, 50, 'a1', node('1')),
      ],
      [hold(0, node('0'), 2, 11, 29), hold(1, node('1'), 3, 32, 49)],
    );
    expect(report.violations).toEqual([]);
  });

  it('fails a hold taken while an older node was still there (the quiet-path bug, a lock that does not wait)', () => {
    const report = run(
      [
        txn.container(1, 0, 'a0', P),
        txn.create(2, 10, 'a1', node('0')),
        txn.create(3, 12, 'a0', node('1')),
        txn.delete(4, 40, 'a1', node('0')),
        txn.delete(5, 50, 'a0', node('1')),
      ],
      [hold(1, node('0'), 2, 11, 39), hold(0, node('1'), 3, 13, 49)],
    );
    expect(kinds(report)).toEqual(['admission']);
    expect(report.violations[0]?.message).toContain('deleted 27 ms later');
  });

  it('gives the benefit of the clocks: a deletion logged within the uncertainty counts as done', () => {
    const report = run(
      [
        txn.create(2, 10, 'a1', node('0')),
        txn.create(3, 12, 'a0', node('1')),
        txn.delete(4, 20, 'a1', node('0')),
        txn.delete(5, 50, 'a0', node('1')),
      ],
      [hold(1, node('0'), 2, 11, 19), hold(0, node('1'), 3, 19.5, 49, { uncertainty: 0.5 })],
    );
    expect(report.violations).toEqual([]);
  });

  it('lets readers share and keeps a writer out of them', () => {
    const specs = [
      txn.create(2, 10, 'a0', reader('0')),
      txn.create(3, 11, 'a1', reader('1')),
      txn.create(4, 12, 'a2', writer('2')),
      txn.delete(5, 30, 'a0', reader('0')),
      txn.delete(6, 31, 'a1', reader('1')),
      txn.delete(7, 50, 'a2', writer('2')),
    ];
    const readers = [
      hold(0, reader('0'), 2, 10.5, 29, { kind: 'read' }),
      hold(1, reader('1'), 3, 11.5, 30, { kind: 'read' }),
    ];
    expect(
      run(specs, [...readers, hold(2, writer('2'), 4, 33, 49, { kind: 'write' })]).violations,
    ).toEqual([]);
    expect(
      kinds(run(specs, [...readers, hold(2, writer('2'), 4, 20, 49, { kind: 'write' })])),
    ).toContain('admission');
  });

  it('counts leases: more than `leases` older leases alive is a violation', () => {
    const L = '/r/sem/leases';
    const lease = (name: string) => `${L}/_c_${name}-lease-${name.padStart(10, '0')}`;
    const specs = [
      txn.create(2, 10, 'a0', lease('0')),
      txn.create(3, 11, 'a1', lease('1')),
      txn.create(4, 12, 'a2', lease('2')),
      txn.delete(5, 40, 'a0', lease('0')),
      txn.delete(6, 41, 'a1', lease('1')),
      txn.delete(7, 42, 'a2', lease('2')),
    ];
    const holds = [
      hold(0, lease('0'), 2, 10.5, 39, { kind: 'lease', resource: '/r/sem' }),
      hold(1, lease('1'), 3, 11.5, 40, { kind: 'lease', resource: '/r/sem' }),
      hold(2, lease('2'), 4, 12.5, 41, { kind: 'lease', resource: '/r/sem' }),
    ];
    expect(run(specs, holds, { leases: 3 }).violations).toEqual([]);
    expect(kinds(run(specs, holds, { leases: 2 }))).toEqual(['admission']);
  });

  it('fails a node ZooKeeper never had, and a token that is not its czxid', () => {
    const specs = [txn.create(2, 10, 'a0', node('0')), txn.delete(3, 20, 'a0', node('0'))];
    expect(kinds(run(specs, [hold(0, node('9'), 2, 11, 19)]))).toEqual(['unknown-node']);
    expect(kinds(run(specs, [hold(0, node('0'), 7, 11, 19)]))).toEqual(['token-mismatch']);
  });

  it('finds a node by its token alone, and fails a node created after the belief', () => {
    const specs = [
      txn.create(2, 10, 'a0', node('0')),
      txn.create(3, 11, 'a1', node('1')),
      txn.delete(4, 20, 'a0', node('0')),
      txn.delete(5, 30, 'a1', node('1')),
    ];
    // By token: node 1 (czxid 3), believed after node 0 went.
    expect(run(specs, [hold(1, node('1'), 3, 21, 29, { node: undefined })]).violations).toEqual([]);
    // By token, while node 0 was still there: the admission fails as with a named node.
    expect(kinds(run(specs, [hold(1, node('1'), 3, 15, 29, { node: undefined })]))).toEqual([
      'admission',
    ]);
    // Node 1 named for a belief that began before ZooKeeper created it: the node is misnamed,
    // and admission is not judged on it.
    expect(kinds(run(specs, [hold(1, node('1'), 3, 5, 29)]))).toEqual(['node-after-belief']);
  });
});

describe('check: losses', () => {
  const specs = [
    txn.create(2, 10, 'a0', node('0')),
    txn.create(3, 11, 'a1', node('1')),
    txn.close(4, 2_000, 'a0', [node('0')]),
    txn.delete(5, 3_000, 'a1', node('1')),
  ];

  it('passes a loss signalled before ZooKeeper deleted the node, within the session timeout', () => {
    const report = run(
      specs,
      [
        hold(0, node('0'), 2, 12, 700, { end: 'lost', reason: 'LockLostError:suspended' }),
        hold(1, node('1'), 3, 2_010, 2_900),
      ],
      { faults: [fault('blackhole', 0, 100, 2_500)] },
    );
    expect(report.violations).toEqual([]);
    expect(report.stats.lossLatency.blackhole).toEqual({ count: 1, p50: 600, max: 600 });
  });

  it('fails a holder that still believed after its node was gone (onSuspended continue under a blackhole)', () => {
    const report = run(
      specs,
      [
        hold(0, node('0'), 2, 12, 2_600, { end: 'lost', reason: 'LockLostError:session-expired' }),
        hold(1, node('1'), 3, 2_010, 2_900),
      ],
      { faults: [fault('blackhole', 0, 100, 2_500)] },
    );
    expect(kinds(report).sort()).toEqual(['late-loss', 'stale-belief']);
    expect(report.stats.beliefOverlaps).toBe(1);
  });

  it('excuses a short stale belief after a forced expiry (the server closed a connected session)', () => {
    const report = run(
      specs,
      [
        hold(0, node('0'), 2, 12, 2_003, { end: 'lost', reason: 'LockLostError:session-expired' }),
        hold(1, node('1'), 3, 2_002, 2_900),
      ],
      { faults: [fault('expire', 0, 1_999)] },
    );
    expect(report.violations).toEqual([]);
    expect(report.stats.staleBeliefs).toBe(1);
  });

  it('counts, and does not judge, a lease handed over already lost (a multi-lock taking its next lock)', () => {
    const onArrival = hold(0, node('0'), 2, 2_500, 2_500, {
      end: 'lost',
      reason: 'LockLostError:suspended',
      lostOnArrival: true,
    });
    const report = run(specs, [onArrival, hold(1, node('1'), 3, 2_010, 2_900)]);
    expect(report.violations).toEqual([]);
    expect(report.stats.lostOnArrival).toBe(1);
  });

  it('excuses a stalled holder, and measures its loss from the end of the stall', () => {
    const stalled = hold(0, node('0'), 2, 12, 2_400, {
      end: 'lost',
      reason: 'LockLostError:session-expired',
    });
    const faults = [fault('stall', 0, 500, 2_390)];
    expect(
      run(specs, [stalled, hold(1, node('1'), 3, 2_010, 2_900)], { faults }).violations,
    ).toEqual([]);
    const late = { ...stalled, endedAt: 3_500 };
    expect(kinds(run(specs, [late, hold(1, node('1'), 3, 2_010, 2_900)], { faults }))).toEqual([
      'late-loss',
    ]);
  });
});

describe('check: a belief that began after ZooKeeper deleted its node', () => {
  // Issue 17's history, on a 1 s session timeout. Worker 2's node 0 is first in the queue; its
  // listing's reply is on the wire when a forced expiry and a stall strike it 2 ms apart. The
  // server closes the session (node 0 deleted at 100) and admits worker 0 (node 1, at 105).
  // The stall ends at 698; worker 2 reads the reply, believes it leads at 700 with node 0's
  // token, for a node deleted 600 ms before; its only write is refused; it hears of the loss at
  // 705. ZooKeeper admitted node 0 first and never admitted it again: no token inversion, no
  // overlap of two admitted holds; a stale belief that the expiry and the stall excuse.
  const specs = [
    txn.create(2, 10, 'a2', node('0')),
    txn.create(3, 20, 'a0', node('1')),
    txn.close(4, 100, 'a2', [node('0')]),
    txn.delete(5, 901, 'a0', node('1')),
  ];
  const admitted = hold(0, node('1'), 3, 105, 900, { attemptAt: 19 });
  const late = hold(2, node('0'), 2, 700, 705, {
    attemptAt: 5,
    end: 'lost',
    reason: 'LockLostError:session-expired',
  });
  const writes = [
    write(admitted.holdId, 3, 110, true),
    write(late.holdId, 2, 702, false, 2),
    write(admitted.holdId, 3, 800, true),
  ];

  it('judges an expire and a stall struck as the reply was in flight by the stale-belief rule, not as a token inversion', () => {
    const faults = [fault('expire', 2, 98), fault('stall', 2, 99, 698)];
    const report = run(specs, [admitted, late], { writes, faults });
    expect(report.violations).toEqual([]);
    expect(report.stats.beliefsAfterDeletion).toBe(1);
    expect(report.stats.staleWritesRefused).toBe(1);
    expect(report.stats.beliefOverlaps).toBe(1);
    // Its cause is the later of the two faults, the stall; the loss counts from the stall's end
    // or the belief's start, whichever came last: 5 ms.
    expect(report.stats.lossLatency.stall).toEqual({ count: 1, p50: 5, max: 5 });
  });

  it('excuses the stall-only variant: a stall under way when the node went, begun before the belief', () => {
    // No expiry forced: the stall outlasts the session timeout, and the server expires it.
    const stallOnly = [
      txn.create(2, 10, 'a2', node('0')),
      txn.create(3, 20, 'a0', node('1')),
      txn.close(4, 1_100, 'a2', [node('0')]),
      txn.delete(5, 1_901, 'a0', node('1')),
    ];
    const first = { ...admitted, acquiredAt: 1_105, endedAt: 1_900 };
    const stale = { ...late, acquiredAt: 1_502, endedAt: 1_510 };
    const faults = [fault('stall', 2, 99, 1_500)];
    const stallWrites = [
      write(first.holdId, 3, 1_110, true),
      write(stale.holdId, 2, 1_505, false, 2),
    ];
    const report = run(stallOnly, [first, stale], { writes: stallWrites, faults });
    expect(report.violations).toEqual([]);
    expect(report.stats.beliefsAfterDeletion).toBe(1);
    // Still bounded: a worker that hears of its loss more than a session timeout after the
    // stall's end is late.
    const slow = run(stallOnly, [first, { ...stale, endedAt: 2_600 }], {
      writes: stallWrites,
      faults,
    });
    expect(kinds(slow)).toEqual(['late-loss']);
    // And a stall that was over before the belief and before the node went excuses nothing.
    const over = run(stallOnly, [first, stale], {
      writes: stallWrites,
      faults: [fault('stall', 2, 99, 1_000)],
    });
    expect(kinds(over)).toEqual(['stale-belief']);
  });

  it('still fails a late hold whose node ZooKeeper had not yet deleted when the belief began', () => {
    // The same beliefs, but node 0 deleted only after worker 2 began to believe: worker 0 was
    // let in while node 0 was still there, out of ZooKeeper's order.
    const alive = [
      txn.create(2, 10, 'a2', node('0')),
      txn.create(3, 20, 'a0', node('1')),
      txn.close(4, 703, 'a2', [node('0')]),
      txn.delete(5, 901, 'a0', node('1')),
    ];
    const faults = [fault('expire', 2, 98), fault('stall', 2, 99, 698)];
    expect(kinds(run(alive, [admitted, late], { faults })).sort()).toEqual([
      'admission',
      'token-order',
    ]);
  });
});

describe('check: order and overlap between holds ZooKeeper admitted', () => {
  const specs = [
    txn.create(2, 10, 'a1', node('0')),
    txn.create(3, 12, 'a0', node('1')),
    txn.delete(4, 50, 'a1', node('0')),
    txn.delete(5, 90, 'a0', node('1')),
  ];

  it('fails a token inversion: a hold ZooKeeper admitted later believed first', () => {
    // Node 1 (token 3) believed at 20 while node 0 (token 2) was there until 50; node 0's
    // holder believed at 30. Both nodes were there when their beliefs began.
    const report = run(specs, [hold(1, node('0'), 2, 30, 45), hold(0, node('1'), 3, 20, 80)]);
    expect(kinds(report).sort()).toEqual(['admission', 'token-order']);
    expect(report.violations.find((v) => v.kind === 'token-order')?.message).toContain(
      'which ZooKeeper admitted first',
    );
  });

  it('fails an overlap of two holds whose nodes were both there, even within the admission margin', () => {
    // Node 0 deleted at 30 (within the clocks' benefit of node 1's admission at 30), but its
    // holder believed until 60: both believed, and neither node was gone when node 1's began.
    const tight = [
      txn.create(2, 10, 'a1', node('0')),
      txn.create(3, 12, 'a0', node('1')),
      txn.delete(4, 30, 'a1', node('0')),
      txn.delete(5, 90, 'a0', node('1')),
    ];
    const report = run(tight, [hold(1, node('0'), 2, 11, 60), hold(0, node('1'), 3, 30, 80)]);
    expect(kinds(report).sort()).toEqual(['overlap', 'stale-belief']);
  });
});

describe('check: fencing', () => {
  const specs = [
    txn.create(2, 10, 'a0', node('0')),
    txn.create(3, 11, 'a1', node('1')),
    txn.delete(4, 20, 'a0', node('0')),
    txn.delete(5, 40, 'a1', node('1')),
  ];
  const first = hold(0, node('0'), 2, 10.5, 19);
  const second = hold(1, node('1'), 3, 21, 39);

  it('passes writes in holding order', () => {
    const writes = [write(first.holdId, 2, 15, true), write(second.holdId, 3, 25, true, 1)];
    expect(run(specs, [first, second], { writes }).violations).toEqual([]);
  });

  it('counts a stale write the fence refused, and fails one refused while its node was still there', () => {
    const late = write(first.holdId, 2, 30, false);
    const report = run(specs, [first, second], {
      writes: [write(second.holdId, 3, 25, true, 1), late],
    });
    expect(report.stats.staleWritesRefused).toBe(1);
    const early = write(first.holdId, 2, 16, false);
    expect(
      kinds(run(specs, [first, second], { writes: [write(second.holdId, 3, 15, true, 1), early] })),
    ).toContain('fence');
  });

  it('fails a register that accepts a lower token, and tokens out of holding order', () => {
    const writes = [write(second.holdId, 3, 25, true, 1), write(first.holdId, 2, 30, true)];
    expect(kinds(run(specs, [first, second], { writes }))).toContain('register');
    const swapped = run(specs, [
      { ...first, token: 3 },
      { ...second, token: 2 },
    ]);
    expect(kinds(swapped)).toContain('token-order');
  });
});

describe('check: the end of the run', () => {
  it('fails crashes, leftovers and workers that made no progress', () => {
    const report = run([], [], {
      crashes: ['worker 1: unhandled rejection'],
      leftovers: ['/r/lock/_c_x-lock-0000000003'],
      noProgress: ['worker 2 made no acquisition'],
    });
    expect(kinds(report)).toEqual(['crash', 'leftover', 'no-progress']);
  });
});
