/**
 * The fleet mode's own rules, judged after the lock rules (checker.ts) have judged every item's
 * holds as holds of a mutex: balance at the end of each quiet period, and stickiness across each
 * change made alone. Pure: no server, no clock of its own.
 *
 * - Membership is ZooKeeper's: the ephemerals `<path>/members/member-<worker>` in the log say who
 *   was a live member when.
 * - A quiet period is a stretch of at least `settleMs` with nothing that may move an item: no
 *   fault (from its start to its heal), no join or leave asked by the coordinator, no member node
 *   created or deleted in the log, no item-set change, no lost item (a loss is the worker's own
 *   evidence of a fault: a busy machine can suspend a connection). At its end (1 ms before the
 *   next disturbance) the live members' assignments must split the item set ⌊n/m⌋ or ⌈n/m⌉ each
 *   and cover it (`balance`), and no member may own an item it was not told to list
 *   (`item-sets`: one removed from the set and not given up).
 * - Between two judged quiet periods separated by one change and nothing else (one join, with its
 *   member node's creation; one leave, with its node's deletion by the member; or one item-set
 *   change; no fault, no loss), the items of both sets that changed owner are counted against the
 *   fewest any balanced assignment of the new members and items could move (`minimumMoves`), and
 *   an item that kept its owner must have kept its hold (never interrupted) (`stickiness`).
 *   Changes that overlap, or come with faults, may move more (members briefly disagree): they are
 *   not judged.
 * - No item of the set is unowned longer than the session timeout + 3 s after the last fault or
 *   change (`unowned`): in every stretch without a disturbance that lasts longer than that bound,
 *   from the bound on to the next disturbance, every item of the set is held at every moment (by
 *   someone: who, and how many, is `balance`'s and the lock rules' to judge). A member that died
 *   shows when its session expires (a session timeout); the rest is the fleet's own work.
 * - Each worker's set is what it was last told (to all, or to it alone in a rolling deploy). Where
 *   the live members' sets differ at a quiet period's end (`item-sets`): every item some live
 *   member lists is owned by exactly one live member that lists it (so an item every member lists
 *   stays owned, one only some list is owned by one of them), and an item no live member lists is
 *   owned by no one (given up). The count per member is not judged then (the coordinator spreads
 *   each item over the members that list it). `unowned` judges the union of the live members'
 *   sets; where they agree, `balance` and `item-sets` are as above.
 */
import type { CheckedHold, FaultRecord } from './history';
import type { ZooKeeperTruth } from './truth';
import type { Latency, ViolationKind } from './verdict';

/** The coordinator's record of the fleet: what it asked, when (its clock). */
export interface FleetHistory {
  /** The partition's path. */
  readonly path: string;
  /** How long a quiet period must last to be judged (ms). */
  readonly settleMs: number;
  /**
   * The item sets given to the workers, from the first: to every worker, or (`worker`) to one
   * (a rolling deploy replaces one worker at a time by one with another set).
   */
  readonly itemSets: readonly {
    readonly at: number;
    readonly items: readonly string[];
    readonly worker?: number;
  }[];
  /** Joins (subscribe) and leaves (unsubscribe) asked of the workers. */
  readonly commands: readonly {
    readonly at: number;
    readonly worker: number;
    readonly kind: 'join' | 'leave';
  }[];
  /** When the run began to stop its members: the end of the last quiet period. */
  readonly endAt: number;
}

type ChangeKind = 'join' | 'leave' | 'items';

export interface FleetStats {
  /** Quiet periods judged for balance, and those that failed. */
  quietPeriods: number;
  unbalanced: number;
  /** Changes made alone judged for stickiness; spans between quiet periods not judged. */
  changesJudged: number;
  spansNotJudged: number;
  /** Items that changed owner across the judged changes, the fewest needed, interruptions. */
  moves: number;
  minimumMoves: number;
  interruptions: number;
  byChange: Record<ChangeKind, { count: number; moves: number; minimum: number }>;
  /** From a quiet period's start to its last ownership change (ms). */
  convergence: Latency;
  /** Stretches judged for `unowned` (longer than its bound), and the items found unowned. */
  ownedStretches: number;
  unownedItems: number;
  /** Each judged stretch: from its start until every item of the set was held (ms). */
  allOwnedAfter: Latency;
  /**
   * Quiet periods whose live members were told different sets (a deploy under way), judged by
   * `item-sets` instead of the count of `balance`, and those that failed.
   */
  mixedPeriods: number;
  mixedFailed: number;
  /** Members at the judged quiet periods' ends (fewest, most), items (fewest, most). */
  members: { min: number; max: number };
  items: { min: number; max: number };
}

export interface FleetCheckArgs {
  readonly fleet: FleetHistory;
  /** The holds the lock rules judged (item holds: resource `<path>/items/<item>`). */
  readonly holds: readonly CheckedHold[];
  readonly faults: readonly FaultRecord[];
  readonly truth: ZooKeeperTruth;
  /** The log's wall-clock time → the earliest / latest coordinator time it can be. */
  readonly low: (wall: number) => number;
  readonly high: (wall: number) => number;
  readonly violate: (kind: ViolationKind, message: string, holds?: readonly string[]) => void;
  readonly latency: (values: readonly number[]) => Latency;
  /** The members' session timeout: `unowned`'s bound is this plus `UNOWNED_GRACE_MS`. */
  readonly sessionTimeoutMs: number;
}

/** How long past a session timeout after the last disturbance an item may stay unowned. */
export const UNOWNED_GRACE_MS = 3_000;

/**
 * The fewest items a change must move: from the owners `before` (item → member) to any balanced
 * assignment of `items` over `members` (each ⌊n/m⌋ or ⌈n/m⌉). Items of `items` owned before by
 * a member that is gone must all move. A member `j` that owned `o_j` of the items keeps at most
 * `min(o_j, quota_j)`; the `n mod m` quotas of ⌈n/m⌉ keep one more item each only where
 * `o_j > ⌊n/m⌋`, so the most kept is `Σ min(o_j, ⌊n/m⌋) + min(n mod m, #{j : o_j > ⌊n/m⌋})`,
 * and any assignment that keeps those and places the rest is balanced.
 *
 * @param before Each item's owner before the change (items not listed were not owned).
 * @param members The members after the change.
 * @param items The items after the change.
 * @return The fewest owned items that must change owner.
 */
export function minimumMoves<M>(
  before: ReadonlyMap<string, M>,
  members: readonly M[],
  items: readonly string[],
): number {
  const count = members.length;
  if (count === 0) return 0;
  const base = Math.floor(items.length / count);
  const extra = items.length % count;
  const owned = new Map<M, number>(members.map((member) => [member, 0]));
  let total = 0;
  for (const item of items) {
    const owner = before.get(item);
    if (owner === undefined) continue;
    total += 1;
    // An item of a member that is gone counts in `total` and is never kept: it must move.
    const held = owned.get(owner);
    if (held !== undefined) owned.set(owner, held + 1);
  }
  let kept = 0;
  let over = 0;
  for (const held of owned.values()) {
    kept += Math.min(held, base);
    if (held > base) over += 1;
  }
  kept += Math.min(extra, over);
  return total - kept;
}

const MEMBER = /^member-(\d+)$/;

interface Disturbance {
  readonly from: number;
  readonly to: number;
  readonly what: 'fault' | 'loss' | 'command' | 'items' | 'member';
  readonly worker?: number;
  readonly kind?: 'join' | 'leave' | 'created' | 'deleted';
  /** A member node's deletion: by its member (`delete`), or its session's end. */
  readonly byMember?: boolean;
  readonly label: string;
}

interface Quiet {
  readonly from: number;
  readonly to: number;
  /** When it is judged: 1 ms before the next disturbance. */
  readonly at: number;
  readonly owners: Map<string, CheckedHold>;
  readonly balanced: boolean;
  readonly items: readonly string[];
  readonly members: readonly number[];
}

/**
 * Judges balance and stickiness (see the module's comment).
 *
 * @param args The fleet's record, the judged holds, the faults, ZooKeeper's record.
 * @return The figures.
 */
export function checkFleet(args: FleetCheckArgs): FleetStats {
  const { fleet, truth, low, high, violate } = args;
  const itemsPrefix = `${fleet.path}/items/`;
  const itemHolds = args.holds.filter((hold) => hold.resource.startsWith(itemsPrefix));
  const itemOf = (hold: CheckedHold) => hold.resource.slice(itemsPrefix.length);
  const memberLives = (truth.childrenOf.get(`${fleet.path}/members`) ?? []).filter(
    (life) => life.ephemeral && MEMBER.test(life.name),
  );
  const workerOf = (name: string) => Number(MEMBER.exec(name)?.[1]);

  // ---- what may move an item ----
  const disturbances: Disturbance[] = [];
  for (const fault of args.faults) {
    disturbances.push({
      from: fault.start,
      to: Math.max(fault.start, fault.healedAt ?? fault.start),
      what: 'fault',
      ...(fault.target === undefined ? {} : { worker: fault.target }),
      label: `fault #${fault.id} (${fault.kind})`,
    });
  }
  for (const hold of itemHolds) {
    if (hold.end === 'lost' && hold.endedAt !== undefined) {
      disturbances.push({
        from: hold.endedAt,
        to: hold.endedAt,
        what: 'loss',
        worker: hold.worker,
        label: `${hold.holdId} lost (${hold.reason})`,
      });
    }
  }
  for (const command of fleet.commands) {
    disturbances.push({
      from: command.at,
      to: command.at,
      what: 'command',
      worker: command.worker,
      kind: command.kind,
      label: `${command.kind} of worker ${command.worker}`,
    });
  }
  for (const [index, set] of fleet.itemSets.entries()) {
    disturbances.push({
      from: set.at,
      to: set.at,
      what: 'items',
      ...(set.worker === undefined ? {} : { worker: set.worker }),
      label:
        index === 0
          ? 'the first item set'
          : `item set ${index}${set.worker === undefined ? '' : ` (worker ${set.worker})`}`,
    });
  }
  // A boot before ZooKeeper (`boot` faults): the joins asked while every server was down are
  // the fleet's own work once they are up. The first member node of each such worker made after
  // the boot began disturbs nothing: the rules bite from the boot's end plus their bounds.
  const bootJoined = new Set<(typeof memberLives)[number]>();
  for (const boot of args.faults) {
    if (boot.kind !== 'boot' || boot.healedAt === undefined) continue;
    const healed = boot.healedAt;
    for (const command of fleet.commands) {
      if (command.kind !== 'join' || command.at < boot.start || command.at > healed) continue;
      const first = memberLives
        .filter(
          (life) => workerOf(life.name) === command.worker && high(life.created) >= boot.start,
        )
        .sort((a, b) => a.created - b.created)[0];
      if (first) bootJoined.add(first);
    }
  }
  for (const life of memberLives) {
    const worker = workerOf(life.name);
    if (!bootJoined.has(life)) {
      disturbances.push({
        from: low(life.created),
        to: high(life.created),
        what: 'member',
        worker,
        kind: 'created',
        label: `${life.name} joined`,
      });
    }
    if (life.deleted !== undefined) {
      disturbances.push({
        from: low(life.deleted),
        to: high(life.deleted),
        what: 'member',
        worker,
        kind: 'deleted',
        byMember: life.deletedBy === 'delete',
        label: `${life.name} gone (${life.deletedBy})`,
      });
    }
  }
  disturbances.push({
    from: fleet.endAt,
    to: Number.POSITIVE_INFINITY,
    what: 'command',
    label: 'the end',
  });
  disturbances.sort((a, b) => a.from - b.from);

  // ---- the state at a moment ----
  /** What `worker` was last told to list at `at`. */
  const setOf = (worker: number, at: number): readonly string[] => {
    let items: readonly string[] = [];
    for (const set of fleet.itemSets) {
      if (set.at <= at && (set.worker === undefined || set.worker === worker)) items = set.items;
    }
    return items;
  };
  /** The union of the live members' sets at `at`, and whether they all agree. */
  const listedAt = (at: number, members: readonly number[]) => {
    const sets = members.map((worker) => setOf(worker, at));
    const keys = new Set(sets.map((items) => items.join('\u0000')));
    const union = new Set<string>();
    for (const items of sets) for (const item of items) union.add(item);
    return { sets, union, uniform: keys.size <= 1 };
  };
  /** The items the fleet should own at `at`: the union of the live members' sets. */
  const itemsAt = (at: number): readonly string[] => [...listedAt(at, membersAt(at)).union];
  const membersAt = (at: number): number[] =>
    memberLives
      .filter(
        (life) =>
          high(life.created) <= at && (life.deleted === undefined || low(life.deleted) > at),
      )
      .map((life) => workerOf(life.name));
  /**
   * For a message: a live member whose last command was a leave (its member node outlived it: a
   * member that is not there, for the fleet as for this checker).
   */
  const leftAlready = (worker: number, at: number): string => {
    const last = fleet.commands
      .filter((command) => command.worker === worker && command.at <= at)
      .at(-1);
    return last?.kind === 'leave'
      ? ` (told to leave ${Math.round(at - last.at)} ms before: its member node is still there)`
      : '';
  };
  const heldAt = (at: number): CheckedHold[] =>
    itemHolds.filter(
      (hold) => hold.acquiredAt <= at && (hold.endedAt ?? Number.POSITIVE_INFINITY) > at,
    );

  // ---- balance at the end of each quiet period ----
  const stats: FleetStats = {
    quietPeriods: 0,
    unbalanced: 0,
    changesJudged: 0,
    spansNotJudged: 0,
    moves: 0,
    minimumMoves: 0,
    interruptions: 0,
    byChange: {
      join: { count: 0, moves: 0, minimum: 0 },
      leave: { count: 0, moves: 0, minimum: 0 },
      items: { count: 0, moves: 0, minimum: 0 },
    },
    convergence: args.latency([]),
    ownedStretches: 0,
    unownedItems: 0,
    allOwnedAfter: args.latency([]),
    mixedPeriods: 0,
    mixedFailed: 0,
    members: { min: Number.POSITIVE_INFINITY, max: 0 },
    items: { min: Number.POSITIVE_INFINITY, max: 0 },
  };
  const convergence: number[] = [];
  const quiets: Quiet[] = [];
  let reach = Number.NEGATIVE_INFINITY;
  for (const next of disturbances) {
    if (reach > Number.NEGATIVE_INFINITY && next.from - reach >= fleet.settleMs) {
      quiets.push(judgeQuiet(reach, next.from));
    }
    reach = Math.max(reach, next.to);
  }

  function judgeQuiet(from: number, to: number): Quiet {
    const at = to - 1;
    const members = membersAt(at);
    const listed = listedAt(at, members);
    const items = [...listed.union];
    const held = heldAt(at);
    stats.quietPeriods += 1;
    stats.members.min = Math.min(stats.members.min, members.length);
    stats.members.max = Math.max(stats.members.max, members.length);
    stats.items.min = Math.min(stats.items.min, items.length);
    stats.items.max = Math.max(stats.items.max, items.length);
    // Convergence: the last ownership change within the quiet period.
    let last = from;
    for (const hold of itemHolds) {
      for (const time of [hold.acquiredAt, hold.endedAt]) {
        if (time !== undefined && time > from && time <= at) last = Math.max(last, time);
      }
    }
    convergence.push(last - from);

    const problems: string[] = [];
    /** Items owned by a live member that was not told to list them (`item-sets`). */
    const unlisted: string[] = [];
    const owners = new Map<string, CheckedHold>();
    const inSet = new Set(items);
    const live = new Set(members);
    const counts = new Map<number, number>(members.map((worker) => [worker, 0]));
    for (const hold of held) {
      const item = itemOf(hold);
      const other = owners.get(item);
      if (other) problems.push(`${item} owned by workers ${other.worker} and ${hold.worker}`);
      else owners.set(item, hold);
      if (!live.has(hold.worker)) {
        problems.push(`worker ${hold.worker} owns ${item} and is not a live member`);
        continue;
      }
      counts.set(hold.worker, (counts.get(hold.worker) ?? 0) + 1);
      if (listed.sets[members.indexOf(hold.worker)]?.includes(item)) continue;
      unlisted.push(
        listed.uniform
          ? `worker ${hold.worker} owns ${item}, not in the set`
          : `worker ${hold.worker} owns ${item}, which it does not list${inSet.has(item) ? '' : ' (no live member lists it)'}`,
      );
    }
    const judgedAt = `after ${Math.round(to - from)} ms with no fault and no change (judged ${Math.round(at - from)} ms in)`;
    if (!listed.uniform) {
      // A deploy under way: each listed item owned by one live member that lists it, nothing else.
      stats.mixedPeriods += 1;
      const uncovered = items.filter((item) => !owners.has(item));
      if (uncovered.length > 0) {
        problems.push(
          `${uncovered.length} of ${items.length} listed items owned by no one (${uncovered
            .slice(0, 6)
            .map(
              (item) =>
                `${item}, listed by ${members.filter((_, index) => listed.sets[index]?.includes(item)).join('+')}`,
            )
            .join('; ')}${uncovered.length > 6 ? ', …' : ''})`,
        );
      }
      const all = [...problems, ...unlisted];
      if (all.length > 0) {
        stats.mixedFailed += 1;
        violate(
          'item-sets',
          `${judgedAt}, members ${members.join(',')} listing ${listed.sets.map((set) => set.length).join('/')} items (${items.length} in all): ${all.join('; ')}`,
          held.map((hold) => hold.holdId),
        );
      }
      return { from, to, at, owners, balanced: false, items, members };
    }
    if (unlisted.length > 0) {
      violate(
        'item-sets',
        `${judgedAt}, members ${members.join(',') || 'none'}: ${unlisted.join('; ')}`,
        held.map((hold) => hold.holdId),
      );
    }
    if (members.length > 0) {
      const uncovered = items.filter((item) => !owners.has(item));
      if (uncovered.length > 0) {
        problems.push(
          `${uncovered.length} of ${items.length} items owned by no one (${uncovered.slice(0, 6).join(', ')}${uncovered.length > 6 ? ', …' : ''})`,
        );
      }
      const base = Math.floor(items.length / members.length);
      const most = base + (items.length % members.length === 0 ? 0 : 1);
      const off = [...counts].filter(([, count]) => count < base || count > most);
      if (off.length > 0) {
        problems.push(
          `${items.length} items over ${members.length} members should be ${base}${most > base ? ` or ${most}` : ''} each: ${off.map(([worker, count]) => `worker ${worker} owns ${count}${leftAlready(worker, at)}`).join(', ')}`,
        );
      }
    }
    if (problems.length > 0) {
      stats.unbalanced += 1;
      violate(
        'balance',
        `${judgedAt}, members ${members.join(',') || 'none'}: ${problems.join('; ')}`,
        held.map((hold) => hold.holdId),
      );
    }
    return {
      from,
      to,
      at,
      owners,
      balanced: problems.length === 0 && unlisted.length === 0,
      items,
      members,
    };
  }

  // ---- no item unowned longer than the bound after the last disturbance ----
  const bound = args.sessionTimeoutMs + UNOWNED_GRACE_MS;
  const holdsOf = new Map<string, CheckedHold[]>();
  for (const hold of itemHolds) {
    const item = itemOf(hold);
    const list = holdsOf.get(item) ?? [];
    list.push(hold);
    holdsOf.set(item, list);
  }
  for (const list of holdsOf.values()) list.sort((a, b) => a.acquiredAt - b.acquiredAt);
  const allOwnedAfter: number[] = [];
  let since = Number.NEGATIVE_INFINITY;
  for (const next of disturbances) {
    if (since > Number.NEGATIVE_INFINITY && next.from - since > bound) {
      judgeOwned(since, next.from);
    }
    since = Math.max(since, next.to);
  }

  /** Every item of the set held from `from + bound` until `to`; when all were first held. */
  function judgeOwned(from: number, to: number): void {
    const start = from + bound;
    const end = to - 1;
    if (membersAt(start).length === 0) return;
    stats.ownedStretches += 1;
    const unowned: string[] = [];
    let allHeldAt = from;
    for (const item of itemsAt(start)) {
      // Sweep the item's holds over [from, end]: `covered` is how far they cover it without a
      // gap; a gap that reaches past `start` is a violation; the last gap's end is when it was
      // held for good.
      let covered = from;
      let heldFrom = from;
      let gapAt: number | undefined;
      for (const hold of holdsOf.get(item) ?? []) {
        const until = hold.endedAt ?? Number.POSITIVE_INFINITY;
        if (until <= covered) continue;
        if (hold.acquiredAt > covered) {
          // A gap [covered, acquiredAt): past the bound, a violation.
          if (hold.acquiredAt > start && gapAt === undefined && covered <= end) {
            gapAt = Math.max(covered, start);
          }
          if (hold.acquiredAt > end) break;
          heldFrom = hold.acquiredAt;
        }
        covered = Math.max(covered, until);
        if (covered > end) break;
      }
      if (covered <= end && gapAt === undefined) gapAt = Math.max(covered, start);
      if (gapAt !== undefined) unowned.push(`${item} (from +${Math.round(gapAt - from)} ms)`);
      else allHeldAt = Math.max(allHeldAt, heldFrom);
    }
    if (unowned.length === 0) {
      allOwnedAfter.push(allHeldAt - from);
      return;
    }
    stats.unownedItems += unowned.length;
    violate(
      'unowned',
      `${unowned.length} of ${itemsAt(start).length} items unowned more than ${bound} ms (session timeout + ${UNOWNED_GRACE_MS} ms) into ${Math.round(to - from)} ms with no fault and no change: ${unowned.slice(0, 6).join(', ')}${unowned.length > 6 ? ', …' : ''}`,
    );
  }

  // ---- stickiness across each change made alone ----
  for (let index = 1; index < quiets.length; index++) {
    const before = quiets[index - 1] as Quiet;
    const after = quiets[index] as Quiet;
    const between = disturbances.filter(
      (disturbance) => disturbance.from >= before.to && disturbance.from <= after.from,
    );
    const change = aloneChange(between);
    if (!change || !before.balanced || !after.balanced) {
      stats.spansNotJudged += 1;
      continue;
    }
    const was = new Map<string, number>();
    for (const [item, hold] of before.owners) was.set(item, hold.worker);
    const minimum = minimumMoves(was, after.members, after.items);
    const moved: string[] = [];
    const interrupted: string[] = [];
    for (const item of after.items) {
      const first = before.owners.get(item);
      const second = after.owners.get(item);
      if (!first || !second) continue;
      if (first.worker !== second.worker) {
        moved.push(`${item} (${first.worker}→${second.worker})`);
      } else if (first.holdId !== second.holdId) {
        interrupted.push(
          `${item} (worker ${first.worker}: ${first.holdId}, then ${second.holdId})`,
        );
      }
    }
    stats.changesJudged += 1;
    stats.moves += moved.length;
    stats.minimumMoves += minimum;
    stats.interruptions += interrupted.length;
    const figures = stats.byChange[change.kind];
    figures.count += 1;
    figures.moves += moved.length;
    figures.minimum += minimum;
    if (moved.length > minimum || interrupted.length > 0) {
      violate(
        'stickiness',
        `${change.label} (${before.members.length} → ${after.members.length} members, ${before.items.length} → ${after.items.length} items)${moved.length > minimum ? ` moved ${moved.length} items where ${minimum} had to move: ${moved.join(', ')}` : ''}${interrupted.length > 0 ? `${moved.length > minimum ? ';' : ''} interrupted ${interrupted.length} items that kept their owner: ${interrupted.join(', ')}` : ''}`,
      );
    }
  }
  stats.convergence = args.latency(convergence);
  stats.allOwnedAfter = args.latency(allOwnedAfter);
  if (stats.quietPeriods === 0) {
    stats.members = { min: 0, max: 0 };
    stats.items = { min: 0, max: 0 };
  }
  return stats;
}

/**
 * The one change made between two quiet periods, if it came alone: a join with its member node's
 * creation, a leave with its node's deletion by the member, or an item-set change with no member
 * node made or deleted; no fault and no loss.
 */
function aloneChange(
  between: readonly Disturbance[],
): { kind: ChangeKind; label: string } | undefined {
  if (between.some((disturbance) => disturbance.what === 'fault' || disturbance.what === 'loss')) {
    return undefined;
  }
  const asked = between.filter(
    (disturbance) => disturbance.what === 'command' || disturbance.what === 'items',
  );
  const nodes = between.filter((disturbance) => disturbance.what === 'member');
  if (asked.length !== 1) return undefined;
  const change = asked[0] as Disturbance;
  if (change.what === 'items') {
    return nodes.length === 0 ? { kind: 'items', label: `the ${change.label} change` } : undefined;
  }
  const node = nodes[0];
  if (nodes.length !== 1 || !node || node.worker !== change.worker) return undefined;
  if (change.kind === 'join' && node.kind === 'created') {
    return { kind: 'join', label: `the join of worker ${change.worker}` };
  }
  if (change.kind === 'leave' && node.kind === 'deleted' && node.byMember) {
    return { kind: 'leave', label: `the leave of worker ${change.worker}` };
  }
  return undefined;
}
