import { describe, expect, it } from 'vitest';
import { type TxnSpec, txn, txnLogFile } from '../test/txn-builder';
import { type CheckInput, check } from './checker';
import type { CheckedHold, FaultRecord } from './history';
import { type FleetHistory, minimumMoves } from './partition-check';
import { buildTruth } from './truth';
import { parseTxnLog } from './txn-log';

// A fleet at /r/fleet, on a settle time of 100 ms; the log's clock is the coordinator's.
const F = '/r/fleet';
const memberNode = (worker: number) => `${F}/members/member-${worker}`;
const lockNode = (item: string, seq: number) =>
  `${F}/items/${item}/_c_${item}${seq}-lock-${String(seq).padStart(10, '0')}`;
const session = (worker: number, generation = 0) => `${worker + 1}${generation}`;

/** ZooKeeper's side, one event a line: made zxids in time order. */
type Event =
  | { at: number; create: string; by: string }
  | { at: number; remove: string; by: string }
  | { at: number; close: string; paths: string[] };

function log(events: Event[]): { specs: TxnSpec[]; czxid: (path: string) => number } {
  const zxids = new Map<string, number>();
  const specs = [...events]
    .sort((a, b) => a.at - b.at)
    .map((event, index) => {
      const zxid = index + 2;
      if ('create' in event) {
        zxids.set(event.create, zxid);
        return txn.create(zxid, event.at, event.by, event.create);
      }
      if ('remove' in event) return txn.delete(zxid, event.at, event.by, event.remove);
      return txn.close(zxid, event.at, event.close, event.paths);
    });
  return {
    specs,
    czxid: (path) => {
      const zxid = zxids.get(path);
      if (zxid === undefined) throw new Error(`no create of ${path}`);
      return zxid;
    },
  };
}

let holds = 0;
function ownership(
  worker: number,
  item: string,
  node: string,
  czxid: (path: string) => number,
  acquiredAt: number,
  endedAt: number,
  extra: Partial<CheckedHold> = {},
): CheckedHold {
  holds += 1;
  return {
    holdId: `h${holds}`,
    group: `h${holds}`,
    worker,
    resource: `${F}/items/${item}`,
    kind: 'exclusive',
    node,
    token: czxid(node),
    sessionId: session(worker),
    attemptAt: acquiredAt - 5,
    acquiredAt,
    endedAt,
    end: 'released',
    reason: 'OwnershipEndedError:left',
    uncertainty: 0,
    ...extra,
  };
}

function judge(
  events: Event[],
  build: (czxid: (path: string) => number) => CheckedHold[],
  fleet: Partial<FleetHistory> = {},
  extra: Partial<CheckInput> = {},
) {
  const { specs, czxid } = log(events);
  return check({
    sessionTimeoutMs: 1_000,
    leases: 1,
    holds: build(czxid),
    writes: [],
    faults: [],
    truth: buildTruth(parseTxnLog(txnLogFile(specs)), '/r'),
    wallOffset: 0,
    crashes: [],
    leftovers: [],
    noProgress: [],
    fleet: {
      path: F,
      settleMs: 100,
      itemSets: [{ at: 0, items: ['a', 'b', 'c', 'd'] }],
      commands: [
        { at: 1, worker: 0, kind: 'join' },
        { at: 3, worker: 1, kind: 'join' },
      ],
      endAt: 600,
      ...fleet,
    },
    ...extra,
  });
}

const kinds = (report: ReturnType<typeof check>) =>
  report.violations.map((violation) => violation.kind);

// Two members own a, b (worker 0) and c, d (worker 1) from 20 on; until the end at 600 nothing
// changes: one quiet period, [4, 600), judged at 599.
const members: Event[] = [
  { at: 2, create: memberNode(0), by: session(0) },
  { at: 4, create: memberNode(1), by: session(1) },
  { at: 650, remove: memberNode(0), by: session(0) },
  { at: 651, remove: memberNode(1), by: session(1) },
];
const locks = (owners: Record<string, number>): Event[] =>
  Object.entries(owners).flatMap(([item, worker], index) => [
    { at: 10 + index, create: lockNode(item, 0), by: session(worker) },
    { at: 660 + index, remove: lockNode(item, 0), by: session(worker) },
  ]);
const owning =
  (owners: Record<string, number>, end = 640) =>
  (czxid: (path: string) => number) =>
    Object.entries(owners).map(([item, worker], index) =>
      ownership(worker, item, lockNode(item, 0), czxid, 20 + index, end),
    );

describe('check (fleet): balance at the end of each quiet period', () => {
  const split = { a: 0, b: 0, c: 1, d: 1 };

  it('passes live members splitting the items evenly', () => {
    const report = judge([...members, ...locks(split)], owning(split));
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({ quietPeriods: 1, unbalanced: 0 });
  });

  it('fails a member owning more than its share: 3 and 1 of 4 items over 2 members', () => {
    const skewed = { a: 0, b: 0, c: 0, d: 1 };
    const report = judge([...members, ...locks(skewed)], owning(skewed));
    expect(kinds(report)).toEqual(['balance']);
    expect(report.violations[0]?.message).toContain('worker 0 owns 3');
  });

  it('fails an item owned by no one, and an item owned that is not in the set', () => {
    const three = { a: 0, b: 0, c: 1 };
    const uncovered = judge([...members, ...locks(three)], owning(three));
    expect(kinds(uncovered)).toEqual(['balance']);
    expect(uncovered.violations[0]?.message).toContain('owned by no one (d)');
    const extra = { a: 0, b: 0, c: 1, d: 1, e: 1 };
    const removed = judge([...members, ...locks(extra)], owning(extra));
    expect(removed.violations.map((violation) => violation.message).join()).toContain(
      'owns e, not in the set',
    );
  });

  it('says so when a member that owns nothing was told to leave and its node is still there', () => {
    // The fleet run at seed 20261125: worker 0 left while the servers were away, its member
    // node stayed; the others split everything between them.
    const others = { a: 1, b: 1, c: 2, d: 2 };
    const report = judge(
      [...members, { at: 5, create: memberNode(2), by: session(2) }, ...locks(others)],
      owning(others),
      {
        commands: [
          { at: 1, worker: 0, kind: 'join' },
          { at: 3, worker: 1, kind: 'join' },
          { at: 3, worker: 2, kind: 'join' },
          { at: 4, worker: 0, kind: 'leave' },
        ],
      },
    );
    expect(kinds(report)).toEqual(['balance']);
    expect(report.violations[0]?.message).toContain(
      'worker 0 owns 0 (told to leave 595 ms before: its member node is still there)',
    );
    expect(report.violations[0]?.message).not.toContain('worker 1 owns 2 (');
  });

  it('fails a worker that owns items while ZooKeeper has no member node of it', () => {
    const report = judge(
      [
        ...members.filter(
          (event) =>
            !('create' in event && event.create === memberNode(1)) &&
            !('remove' in event && event.remove === memberNode(1)),
        ),
        ...locks(split),
      ],
      owning(split),
    );
    expect(kinds(report)).toEqual(['balance']);
    expect(report.violations[0]?.message).toContain('worker 1 owns c and is not a live member');
  });

  it('does not judge a stretch shorter than the settle time, nor one cut by a fault or a loss', () => {
    const skewed = { a: 0, b: 0, c: 0, d: 1 };
    const short = judge([...members, ...locks(skewed)], owning(skewed), { settleMs: 700 });
    expect(short.violations).toEqual([]);
    expect(short.stats.fleet?.quietPeriods).toBe(0);
    // A blackhole from 4 to 550 leaves 50 ms of quiet before the end.
    const faults: FaultRecord[] = [
      {
        id: 1,
        kind: 'blackhole',
        target: 1,
        start: 4,
        healedAt: 550,
        lossReference: 4,
        detail: '',
      },
    ];
    const cut = judge([...members, ...locks(skewed)], owning(skewed), {}, { faults });
    expect(cut.violations).toEqual([]);
    expect(cut.stats.fleet?.quietPeriods).toBe(0);
  });
});

describe('check (fleet): stickiness across a change made alone', () => {
  // Worker 2 joins at 300 (its member node at 302); one of the four items has to move to it.
  // d moves from worker 1: released at 320, its node deleted at 321, worker 2's node (made at
  // 305 while it waited) holds from 322.
  const base: Event[] = [
    ...members,
    ...locks({ a: 0, b: 0, c: 1 }),
    { at: 13, create: lockNode('d', 0), by: session(1) },
    { at: 302, create: memberNode(2), by: session(2) },
    { at: 652, remove: memberNode(2), by: session(2) },
  ];
  const join = {
    commands: [
      { at: 1, worker: 0, kind: 'join' as const },
      { at: 3, worker: 1, kind: 'join' as const },
      { at: 300, worker: 2, kind: 'join' as const },
    ],
  };
  const stay = (czxid: (path: string) => number) => [
    ownership(0, 'a', lockNode('a', 0), czxid, 20, 640),
    ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
    ownership(1, 'c', lockNode('c', 0), czxid, 22, 640),
  ];

  it('passes a join that moves the one item it must', () => {
    const report = judge(
      [
        ...base,
        { at: 305, create: lockNode('d', 1), by: session(2) },
        { at: 321, remove: lockNode('d', 0), by: session(1) },
        { at: 670, remove: lockNode('d', 1), by: session(2) },
      ],
      (czxid) => [
        ...stay(czxid),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(2, 'd', lockNode('d', 1), czxid, 322, 640),
      ],
      join,
    );
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({
      quietPeriods: 2,
      changesJudged: 1,
      moves: 1,
      minimumMoves: 1,
      interruptions: 0,
      byChange: { join: { count: 1, moves: 1, minimum: 1 } },
    });
  });

  it('fails a join that moves more than it must: c and d both go to worker 2 and a to worker 1', () => {
    const report = judge(
      [
        ...members,
        ...locks({ b: 0 }),
        { at: 10, create: lockNode('a', 0), by: session(0) },
        { at: 12, create: lockNode('c', 0), by: session(1) },
        { at: 13, create: lockNode('d', 0), by: session(1) },
        { at: 302, create: memberNode(2), by: session(2) },
        { at: 652, remove: memberNode(2), by: session(2) },
        { at: 305, create: lockNode('c', 1), by: session(2) },
        { at: 306, create: lockNode('d', 1), by: session(2) },
        { at: 307, create: lockNode('a', 1), by: session(1) },
        { at: 321, remove: lockNode('c', 0), by: session(1) },
        { at: 322, remove: lockNode('d', 0), by: session(1) },
        { at: 323, remove: lockNode('a', 0), by: session(0) },
        { at: 670, remove: lockNode('c', 1), by: session(2) },
        { at: 671, remove: lockNode('d', 1), by: session(2) },
        { at: 672, remove: lockNode('a', 1), by: session(1) },
      ],
      (czxid) => [
        ownership(0, 'a', lockNode('a', 0), czxid, 20, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
        ownership(1, 'c', lockNode('c', 0), czxid, 22, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(2, 'c', lockNode('c', 1), czxid, 325, 640),
        ownership(2, 'd', lockNode('d', 1), czxid, 326, 640),
        ownership(1, 'a', lockNode('a', 1), czxid, 327, 640),
      ],
      join,
    );
    expect(kinds(report)).toEqual(['stickiness']);
    expect(report.violations[0]?.message).toContain('moved 3 items where 1 had to move');
  });

  it('fails an item interrupted though it kept its owner', () => {
    const report = judge(
      [
        ...members,
        ...locks({ a: 0, b: 0 }),
        { at: 12, create: lockNode('c', 0), by: session(1) },
        { at: 13, create: lockNode('d', 0), by: session(1) },
        { at: 302, create: memberNode(2), by: session(2) },
        { at: 652, remove: memberNode(2), by: session(2) },
        { at: 305, create: lockNode('d', 1), by: session(2) },
        { at: 321, remove: lockNode('d', 0), by: session(1) },
        { at: 670, remove: lockNode('d', 1), by: session(2) },
        // c given up and taken again by worker 1.
        { at: 331, remove: lockNode('c', 0), by: session(1) },
        { at: 332, create: lockNode('c', 1), by: session(1) },
        { at: 671, remove: lockNode('c', 1), by: session(1) },
      ],
      (czxid) => [
        ...stay(czxid).filter((hold) => hold.resource !== `${F}/items/c`),
        ownership(1, 'c', lockNode('c', 0), czxid, 22, 330, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(1, 'c', lockNode('c', 1), czxid, 333, 640),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(2, 'd', lockNode('d', 1), czxid, 322, 640),
      ],
      join,
    );
    expect(kinds(report)).toEqual(['stickiness']);
    expect(report.violations[0]?.message).toContain('interrupted 1 items that kept their owner');
  });

  it('does not judge the moves of a change that came with a fault', () => {
    const faults: FaultRecord[] = [
      { id: 1, kind: 'cut', target: 0, start: 310, healedAt: 310, lossReference: 310, detail: '' },
    ];
    const report = judge(
      [
        ...members,
        ...locks({ b: 0 }),
        { at: 10, create: lockNode('a', 0), by: session(0) },
        { at: 12, create: lockNode('c', 0), by: session(1) },
        { at: 13, create: lockNode('d', 0), by: session(1) },
        { at: 302, create: memberNode(2), by: session(2) },
        { at: 652, remove: memberNode(2), by: session(2) },
        { at: 305, create: lockNode('c', 1), by: session(2) },
        { at: 307, create: lockNode('a', 1), by: session(1) },
        { at: 321, remove: lockNode('c', 0), by: session(1) },
        { at: 323, remove: lockNode('a', 0), by: session(0) },
        { at: 670, remove: lockNode('c', 1), by: session(2) },
        { at: 672, remove: lockNode('a', 1), by: session(1) },
        { at: 673, remove: lockNode('d', 0), by: session(1) },
      ],
      (czxid) => [
        ownership(0, 'a', lockNode('a', 0), czxid, 20, 311, {
          end: 'lost',
          reason: 'OwnershipEndedError:suspended',
        }),
        ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
        ownership(1, 'c', lockNode('c', 0), czxid, 22, 320, {
          reason: 'OwnershipEndedError:moved',
        }),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 640),
        ownership(2, 'c', lockNode('c', 1), czxid, 325, 640),
        ownership(1, 'a', lockNode('a', 1), czxid, 327, 640),
      ],
      join,
      { faults },
    );
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({
      quietPeriods: 2,
      changesJudged: 0,
      spansNotJudged: 1,
    });
  });

  it("counts a leave: the leaver's items must move, and only they", () => {
    // Worker 1 leaves at 300 (its node deleted at 302); c and d go to worker 0.
    const report = judge(
      [
        { at: 2, create: memberNode(0), by: session(0) },
        { at: 4, create: memberNode(1), by: session(1) },
        { at: 650, remove: memberNode(0), by: session(0) },
        { at: 302, remove: memberNode(1), by: session(1) },
        ...locks({ a: 0, b: 0 }),
        { at: 12, create: lockNode('c', 0), by: session(1) },
        { at: 13, create: lockNode('d', 0), by: session(1) },
        { at: 303, create: lockNode('c', 1), by: session(0) },
        { at: 304, create: lockNode('d', 1), by: session(0) },
        { at: 305, remove: lockNode('c', 0), by: session(1) },
        { at: 306, remove: lockNode('d', 0), by: session(1) },
        { at: 670, remove: lockNode('c', 1), by: session(0) },
        { at: 671, remove: lockNode('d', 1), by: session(0) },
      ],
      (czxid) => [
        ownership(0, 'a', lockNode('a', 0), czxid, 20, 640),
        ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
        ownership(1, 'c', lockNode('c', 0), czxid, 22, 300),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 300),
        ownership(0, 'c', lockNode('c', 1), czxid, 310, 640),
        ownership(0, 'd', lockNode('d', 1), czxid, 311, 640),
      ],
      {
        commands: [
          { at: 1, worker: 0, kind: 'join' },
          { at: 3, worker: 1, kind: 'join' },
          { at: 300, worker: 1, kind: 'leave' },
        ],
      },
    );
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet?.byChange.leave).toEqual({ count: 1, moves: 2, minimum: 2 });
  });
});

describe('check (fleet): each item is a mutex, judged by the lock rules', () => {
  it('fails a member that owns an item before its lock is held (admission)', () => {
    const report = judge(
      [
        ...members,
        ...locks({ a: 0, b: 0, c: 1 }),
        { at: 13, create: lockNode('d', 0), by: session(1) },
        { at: 30, create: lockNode('d', 1), by: session(0) },
        { at: 50, remove: lockNode('d', 0), by: session(1) },
        { at: 670, remove: lockNode('d', 1), by: session(0) },
      ],
      (czxid) => [
        ownership(0, 'a', lockNode('a', 0), czxid, 20, 640),
        ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
        ownership(1, 'c', lockNode('c', 0), czxid, 22, 640),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 49, { reason: 'OwnershipEndedError:moved' }),
        // Worker 0 says it owns d at 31, while worker 1's node is there until 50.
        ownership(0, 'd', lockNode('d', 1), czxid, 31, 640),
      ],
    );
    expect(kinds(report)).toContain('admission');
  });

  it('fails a member that keeps an item after giving it up (stale-belief), and passes one that does not', () => {
    const events: Event[] = [
      ...members,
      ...locks({ a: 0, b: 0, c: 1 }),
      { at: 13, create: lockNode('d', 0), by: session(1) },
      { at: 30, create: lockNode('d', 1), by: session(0) },
      { at: 50, remove: lockNode('d', 0), by: session(1) },
      { at: 670, remove: lockNode('d', 1), by: session(0) },
    ];
    const holds = (releasedAt: number) => (czxid: (path: string) => number) => [
      ownership(0, 'a', lockNode('a', 0), czxid, 20, 640),
      ownership(0, 'b', lockNode('b', 0), czxid, 21, 640),
      ownership(1, 'c', lockNode('c', 0), czxid, 22, 640),
      ownership(1, 'd', lockNode('d', 0), czxid, 23, releasedAt, {
        reason: 'OwnershipEndedError:moved',
      }),
      ownership(0, 'd', lockNode('d', 1), czxid, 52, 640),
    ];
    // Unbalanced in the end (3 and 1): the balance rule says so too; the ownership rules are
    // what this test is about.
    expect(kinds(judge(events, holds(49))).filter((kind) => kind !== 'balance')).toEqual([]);
    expect(kinds(judge(events, holds(550))).filter((kind) => kind !== 'balance')).toEqual([
      'stale-belief',
    ]);
  });
});

describe('minimumMoves', () => {
  it("is the newcomer's quota for a join, the leaver's items for a leave", () => {
    const owners = new Map(
      Array.from({ length: 12 }, (_, index) => [`i${index}`, `m${index % 3}`] as const),
    );
    const items = [...owners.keys()];
    expect(minimumMoves(owners, ['m0', 'm1', 'm2', 'm3'], items)).toBe(3);
    expect(minimumMoves(owners, ['m0', 'm1'], items)).toBe(4);
    // 4 items on two members, two of one member's removed: one of the other's must move.
    const four = new Map([
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
      ['d', 'y'],
    ]);
    expect(minimumMoves(four, ['x', 'y'], ['a', 'b'])).toBe(1);
    expect(minimumMoves(four, ['x', 'y'], ['a', 'b', 'c', 'd', 'e', 'f'])).toBe(0);
  });

  it('equals the fewest moves of any balanced assignment, on every small case', () => {
    // Brute force: every owner map of up to 5 items over up to 3 members (and none), every
    // membership after of up to 3 of 4 members, every balanced assignment.
    const people = ['p', 'q', 'r', 's'];
    for (let n = 0; n <= 5; n++) {
      const items = Array.from({ length: n }, (_, index) => `i${index}`);
      for (let code = 0; code < 4 ** n; code++) {
        const before = new Map<string, string>();
        let rest = code;
        for (const item of items) {
          const owner = rest % 4;
          rest = Math.floor(rest / 4);
          if (owner < 3) before.set(item, people[owner] as string);
        }
        for (let mask = 1; mask < 16; mask++) {
          const after = people.filter((_, index) => mask & (1 << index));
          if (after.length > 3) continue;
          expect(minimumMoves(before, after, items), `${[...before]} → ${after}`).toBe(
            bruteForce(before, after, items),
          );
        }
      }
    }
  });
});

function bruteForce(
  before: ReadonlyMap<string, string>,
  members: readonly string[],
  items: readonly string[],
): number {
  const m = members.length;
  const base = Math.floor(items.length / m);
  let best = Number.POSITIVE_INFINITY;
  for (let code = 0; code < m ** items.length; code++) {
    const counts = members.map(() => 0);
    let rest = code;
    let moves = 0;
    for (const item of items) {
      const at = rest % m;
      rest = Math.floor(rest / m);
      counts[at] = (counts[at] as number) + 1;
      const owner = before.get(item);
      if (owner !== undefined && owner !== members[at]) moves += 1;
    }
    if (counts.every((count) => count === base || count === base + 1)) best = Math.min(best, moves);
  }
  return best;
}

describe('check (fleet): no item unowned longer than the session timeout + 3 s after the last disturbance', () => {
  // The members join by 4; nothing else happens until the end at 5,000: one stretch of 4,996 ms,
  // judged from 4 + 1,000 + 3,000 = 4,004 on. Worker 1 gives d up at 2,000 (its node deleted at
  // 2,001) and takes it again at `again` (a new node 10 ms before).
  const split = { a: 0, b: 0, c: 1 };
  const run = (again: number) => {
    const events: Event[] = [
      ...members.map((event) => ('remove' in event ? { ...event, at: event.at + 6_000 } : event)),
      ...Object.entries(split).flatMap(([item, worker], index) => [
        { at: 10 + index, create: lockNode(item, 0), by: session(worker) },
        { at: 6_700 + index, remove: lockNode(item, 0), by: session(worker) },
      ]),
      { at: 13, create: lockNode('d', 0), by: session(1) },
      { at: 2_001, remove: lockNode('d', 0), by: session(1) },
      { at: again - 10, create: lockNode('d', 1), by: session(1) },
      { at: 6_710, remove: lockNode('d', 1), by: session(1) },
    ];
    return judge(
      events,
      (czxid) => [
        ...Object.entries(split).map(([item, worker], index) =>
          ownership(worker, item, lockNode(item, 0), czxid, 20 + index, 6_000),
        ),
        ownership(1, 'd', lockNode('d', 0), czxid, 23, 2_000),
        ownership(1, 'd', lockNode('d', 1), czxid, again, 6_000),
      ],
      { endAt: 5_000 },
    );
  };

  it('passes an item unowned for a while that is owned again within the bound', () => {
    const report = run(3_000);
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({ ownedStretches: 1, unownedItems: 0 });
    // All four held for good from 3,000: about 3 s into the stretch (its start: the member node's
    // creation, at the latest its log time allows).
    expect(report.stats.fleet?.allOwnedAfter.max).toBeGreaterThan(2_990);
    expect(report.stats.fleet?.allOwnedAfter.max).toBeLessThanOrEqual(3_000);
  });

  it('fails an item still unowned past the bound', () => {
    const late = run(4_500);
    expect(kinds(late)).toEqual(['unowned']);
    expect(late.violations[0]?.message).toContain('1 of 4 items unowned more than 4000 ms');
    expect(late.violations[0]?.message).toContain('d (from +4000 ms)');
    expect(late.stats.fleet).toMatchObject({ ownedStretches: 1, unownedItems: 1 });
  });

  it('does not judge a stretch shorter than the bound', () => {
    const short = judge([...members, ...locks({ a: 0, b: 0, c: 1 })], owning({ a: 0, b: 0, c: 1 }));
    // d is owned by no one: balance says so; the stretch (596 ms) is too short for `unowned`.
    expect(kinds(short)).toEqual(['balance']);
    expect(short.stats.fleet?.ownedStretches).toBe(0);
  });
});

describe('check (fleet): each live member told its own set (a rolling deploy)', () => {
  // Worker 1 is replaced at 0 by one that lists a, b, c, e (d replaced by e); worker 0 still lists
  // a, b, c, d. One quiet period, [4, 600), judged at 599 with the two sets.
  const deploy: Partial<FleetHistory> = {
    itemSets: [
      { at: 0, items: ['a', 'b', 'c', 'd'] },
      { at: 0, items: ['a', 'b', 'c', 'e'], worker: 1 },
    ],
  };
  const judged = (owners: Record<string, number>, fleet: Partial<FleetHistory> = deploy) =>
    judge([...members, ...locks(owners)], owning(owners), fleet);

  it('passes each item of either set owned by one member that lists it, uneven counts included', () => {
    const report = judged({ a: 0, b: 0, d: 0, c: 1, e: 1 });
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({ quietPeriods: 1, mixedPeriods: 1, mixedFailed: 0 });
    // 3 and 2 of 5: `balance` would have it so too, but counts are not judged with mixed sets.
    expect(judged({ a: 0, b: 0, c: 0, d: 0, e: 1 }).violations).toEqual([]);
  });

  it('fails an item owned by a member that does not list it', () => {
    const report = judged({ a: 0, b: 0, c: 1, d: 1, e: 1 });
    expect(kinds(report)).toEqual(['item-sets']);
    expect(report.violations[0]?.message).toContain('worker 1 owns d, which it does not list');
    expect(report.stats.fleet).toMatchObject({ mixedPeriods: 1, mixedFailed: 1 });
  });

  it('fails an item some member lists that no one owns', () => {
    const report = judged({ a: 0, b: 0, d: 0, c: 1 });
    expect(kinds(report)).toEqual(['item-sets']);
    expect(report.violations[0]?.message).toContain('owned by no one (e, listed by 1)');
  });

  it('fails an item no live member lists that is still owned (not given up)', () => {
    // Worker 0 was replaced too, by one that lists a, b, c, e: d is listed by no one.
    const both: Partial<FleetHistory> = {
      itemSets: [
        { at: 0, items: ['a', 'b', 'c', 'd'] },
        { at: 0, items: ['a', 'b', 'c', 'e', 'f'], worker: 1 },
        { at: 0, items: ['a', 'b', 'c', 'e'], worker: 0 },
      ],
    };
    const report = judged({ a: 0, b: 0, d: 0, c: 1, e: 1, f: 1 }, both);
    expect(kinds(report)).toEqual(['item-sets']);
    expect(report.violations[0]?.message).toContain(
      'worker 0 owns d, which it does not list (no live member lists it)',
    );
  });

  it('judges the sets every member was told alike by balance, the latest set given to one included', () => {
    // Both replaced by ones listing a, b, c, e: one set again; d is not in it.
    const done: Partial<FleetHistory> = {
      itemSets: [
        { at: 0, items: ['a', 'b', 'c', 'd'] },
        { at: 0, items: ['a', 'b', 'c', 'e'], worker: 1 },
        { at: 0, items: ['a', 'b', 'c', 'e'], worker: 0 },
      ],
    };
    expect(judged({ a: 0, b: 0, c: 1, e: 1 }, done).violations).toEqual([]);
    // d kept by worker 1 though no one lists it: item-sets says so; the count (3 of 4) balance.
    const kept = judged({ a: 0, b: 0, c: 1, d: 1, e: 1 }, done);
    expect(kinds(kept)).toEqual(['item-sets', 'balance']);
    expect(kept.violations[0]?.message).toContain('worker 1 owns d, not in the set');
    expect(kept.stats.fleet?.mixedPeriods).toBe(0);
  });

  it('judges unowned over the union of the live members sets', () => {
    // A stretch of 4,996 ms judged from 4,004: e, listed by worker 1 alone, never owned.
    const events: Event[] = [
      ...members.map((event) => ('remove' in event ? { ...event, at: event.at + 6_000 } : event)),
      ...locks({ a: 0, b: 0, d: 0, c: 1 }).map((event) =>
        'remove' in event ? { ...event, at: event.at + 6_000 } : event,
      ),
    ];
    const report = judge(events, owning({ a: 0, b: 0, d: 0, c: 1 }, 6_000), {
      ...deploy,
      endAt: 5_000,
    });
    expect(kinds(report)).toEqual(['item-sets', 'unowned']);
    expect(report.violations[1]?.message).toContain('1 of 5 items unowned more than 4000 ms');
    expect(report.violations[1]?.message).toContain('e (from +4000 ms)');
  });
});

describe('check (fleet): a boot before ZooKeeper', () => {
  // Every server down from 0 to 1,000 (a `boot` fault); the joins are asked at 1 and 3, in it.
  // The member nodes are made at 1,500 and 1,600, once the servers are up: the fleet's own work,
  // no disturbance. One stretch from 1,000 to the end at 7,000, judged for `unowned` from
  // 1,000 + 1,000 + 3,000 = 5,000 on (not from the member nodes' 1,600 + 4,000).
  const boot: FaultRecord = {
    id: 0,
    kind: 'boot',
    target: undefined,
    start: 0,
    healedAt: 1_000,
    lossReference: 0,
    detail: 'every server down',
  };
  const run = (dAt: number) => {
    const owners = { a: 0, b: 0, c: 1, d: 1 };
    const events: Event[] = [
      { at: 1_500, create: memberNode(0), by: session(0) },
      { at: 1_600, create: memberNode(1), by: session(1) },
      { at: 7_500, remove: memberNode(0), by: session(0) },
      { at: 7_501, remove: memberNode(1), by: session(1) },
      ...Object.entries(owners).flatMap(([item, worker], index) => [
        {
          at: (item === 'd' ? dAt - 10 : 1_700) + index,
          create: lockNode(item, 0),
          by: session(worker),
        },
        { at: 7_600 + index, remove: lockNode(item, 0), by: session(worker) },
      ]),
    ];
    return judge(
      events,
      (czxid) =>
        Object.entries(owners).map(([item, worker], index) =>
          ownership(
            worker,
            item,
            lockNode(item, 0),
            czxid,
            item === 'd' ? dAt : 1_720 + index,
            7_400,
          ),
        ),
      { endAt: 7_000 },
      { faults: [boot] },
    );
  };

  it('passes a fleet that owns every item within the bound of the servers being up', () => {
    const report = run(1_800);
    expect(report.violations).toEqual([]);
    expect(report.stats.fleet).toMatchObject({
      ownedStretches: 1,
      unownedItems: 0,
      quietPeriods: 1,
    });
  });

  it('counts the bound from the servers being up, not from the member nodes made after', () => {
    const late = run(5_400);
    expect(kinds(late)).toEqual(['unowned']);
    expect(late.violations[0]?.message).toContain('d (from +4000 ms)');
  });
});
