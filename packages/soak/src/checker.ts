/**
 * The checker: judges a run's recorded history (what the workers believed and wrote) against
 * ZooKeeper's own record of it (the transaction log). Pure: no server, no clock of its own.
 *
 * The model (see the package README for the long form):
 * - A hold is what a worker believed: from the moment acquire resolved (`acquiredAt`) until the
 *   earliest of its release() call and its loss signal (`endedAt`). A stalled process records
 *   its loss only when it wakes: its hold then lasts until then, which is what it believed.
 * - Admission (no two holds overlap, judged on ZooKeeper's record): at `acquiredAt`, the lock
 *   node's older siblings that ZooKeeper still had must admit it by the recipe's rule. Times of
 *   the log are the leader's, taken before the change is applied, so a sibling whose deletion
 *   was logged after `acquiredAt` (plus the clocks' uncertainty) was surely still there.
 * - Loss in time: a hold that was lost (signalled, or its node gone in ZooKeeper while the worker
 *   still believed) must have ended within one session timeout of the fault that caused it (for
 *   a stall, of the stall's end); a hold whose node ZooKeeper deleted with no fault around must
 *   have ended within one session timeout of that deletion.
 * - Fencing: tokens strictly increase in admission order between conflicting holds; each hold's
 *   token is its node's czxid; the register's accepted tokens never decrease; a write the
 *   register refused must come from a holder ZooKeeper no longer admitted (a stale belief the
 *   fence stopped), never from a holder whose node was still there.
 * - Belief overlaps of conflicting holds are allowed only while a loss is in flight (the earlier
 *   holder's node already gone): they are counted, and bounded by the loss-in-time rule.
 */
import { type ChildKind, parseChild } from '@zkrx/lock/recipe';
import type { HoldKind } from './protocol';
import type { RegisterWrite } from './register';
import type { ZnodeLife, ZooKeeperTruth } from './truth';

/** One hold, on the coordinator's clock. */
export interface CheckedHold {
  readonly holdId: string;
  readonly group: string;
  readonly worker: number;
  readonly resource: string;
  readonly kind: HoldKind;
  readonly node: string | undefined;
  readonly token: number | undefined;
  readonly sessionId: string | undefined;
  readonly attemptAt: number;
  readonly acquiredAt: number;
  /** Undefined when the worker never said (it crashed). */
  readonly endedAt: number | undefined;
  readonly end: 'released' | 'lost' | undefined;
  readonly reason: string | undefined;
  /**
   * The API handed the lease over already lost (its signal aborted): the worker never believed
   * it held. Counted, not judged.
   */
  readonly lostOnArrival?: boolean;
  /** Uncertainty of the worker's times on the coordinator's clock (ms). */
  readonly uncertainty: number;
}

/** What the nemesis did, on the coordinator's clock. */
export interface FaultRecord {
  readonly id: number;
  readonly kind: FaultKind;
  /** The worker it was aimed at; undefined: the whole fleet (server faults). */
  readonly target: number | undefined;
  readonly start: number;
  /** When it was healed (the proxy resumed, the server back); undefined if never applied. */
  readonly healedAt: number | undefined;
  /** The time losses are measured from: the start, or the end of a stall. */
  readonly lossReference: number;
  readonly detail: string;
}

export type FaultKind =
  | 'expire'
  | 'cut'
  | 'reply-lost'
  | 'blackhole'
  | 'server-restart'
  | 'leader-stop'
  | 'quorum-loss'
  | 'idle-gap'
  | 'stall';

export const FAULT_KINDS: readonly FaultKind[] = [
  'expire',
  'cut',
  'reply-lost',
  'blackhole',
  'server-restart',
  'leader-stop',
  'quorum-loss',
  'idle-gap',
  'stall',
];

export type ViolationKind =
  | 'admission'
  | 'overlap'
  | 'stale-belief'
  | 'late-loss'
  | 'unknown-node'
  | 'node-after-belief'
  | 'token-mismatch'
  | 'token-order'
  | 'register'
  | 'fence'
  | 'leftover'
  | 'no-progress'
  | 'crash'
  | 'truth';

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
  readonly holds?: readonly string[];
}

export interface CheckInput {
  readonly sessionTimeoutMs: number;
  /** Semaphore leases (for `lease` holds). */
  readonly leases: number;
  readonly holds: readonly CheckedHold[];
  readonly writes: readonly RegisterWrite[];
  readonly faults: readonly FaultRecord[];
  readonly truth: ZooKeeperTruth;
  /** `Date.now() - mono()` of the coordinator: maps the log's wall-clock times. */
  readonly wallOffset: number;
  readonly crashes: readonly string[];
  readonly leftovers: readonly string[];
  /** Workers that made no acquisition after the final heal, with what was waited. */
  readonly noProgress: readonly string[];
}

/** Latency figures of one group (ms). */
export interface Latency {
  count: number;
  p50: number;
  max: number;
}

export interface CheckStats {
  holds: number;
  lostHolds: number;
  /** Loss-signal latency (signal time - fault) by the kind of the fault that caused it. */
  lossLatency: Partial<Record<FaultKind, Latency>>;
  /** Losses with no injected fault around (e.g. a connection timeout on a busy machine). */
  lossesWithoutFault: number;
  /** Holds whose node ZooKeeper deleted while the worker still believed (loss in flight). */
  staleBeliefs: number;
  staleBeliefMaxMs: number;
  /** Conflicting holds believed at once while a loss was in flight, and the longest. */
  beliefOverlaps: number;
  beliefOverlapMaxMs: number;
  /** Writes made after the writer's node was gone: refused by the fence / accepted before the next holder wrote. */
  staleWritesRefused: number;
  staleWritesAccepted: number;
  /** The most readers (or leases) seen holding at once. */
  maxShared: number;
  /** Leases handed over already lost (e.g. a multi-lock's first lease, lost while it took the next). */
  lostOnArrival: number;
}

export interface CheckReport {
  readonly violations: readonly Violation[];
  readonly stats: CheckStats;
}

/** Kinds of sibling that keep a hold of `kind` out. */
function conflictsWith(kind: HoldKind, sibling: ChildKind): boolean {
  const lockChild =
    sibling === 'exclusive' || sibling === 'read' || sibling === 'write' || sibling === 'latch';
  switch (kind) {
    case 'read':
      return sibling === 'write';
    case 'lease':
      return sibling === 'lease';
    default:
      return lockChild;
  }
}

/** Whether two holds of one resource exclude each other (leases are judged by count). */
function holdsConflict(a: HoldKind, b: HoldKind): boolean {
  if (a === 'lease' || b === 'lease') return false;
  return !(a === 'read' && b === 'read');
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index] as number;
}

/** Latency figures of a list of values. */
export function latencyOf(values: readonly number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: Math.round(percentile(sorted, 0.5)),
    max: Math.round(sorted.at(-1) ?? 0),
  };
}

/**
 * Checks a run.
 *
 * @param input The history, ZooKeeper's record of it, and what the run saw at its end.
 * @return The violations (none is a pass) and the figures.
 */
export function check(input: CheckInput): CheckReport {
  const { truth, sessionTimeoutMs: sessionTimeout } = input;
  const violations: Violation[] = [];
  const violate = (kind: ViolationKind, message: string, holds?: readonly string[]) =>
    violations.push(holds ? { kind, message, holds } : { kind, message });
  // The log's time t (whole ms, wall clock) is in [t, t + 1) on the wall clock.
  const low = (wall: number) => wall - input.wallOffset;
  const high = (wall: number) => wall + 1 - input.wallOffset;

  const stats: CheckStats = {
    holds: input.holds.length,
    lostHolds: 0,
    lossLatency: {},
    lossesWithoutFault: 0,
    staleBeliefs: 0,
    staleBeliefMaxMs: 0,
    beliefOverlaps: 0,
    beliefOverlapMaxMs: 0,
    staleWritesRefused: 0,
    staleWritesAccepted: 0,
    maxShared: 0,
    lostOnArrival: 0,
  };

  for (const anomaly of truth.anomalies) violate('truth', anomaly);
  const latencyValues = new Map<FaultKind, number[]>();
  const latencies = (kind: FaultKind): number[] => {
    const list = latencyValues.get(kind) ?? [];
    latencyValues.set(kind, list);
    return list;
  };

  // ---- each hold's node ----
  const lifeOf = new Map<string, ZnodeLife>();
  const admissionFailed = new Set<string>();
  const judged = input.holds.filter((hold) => !hold.lostOnArrival);
  stats.lostOnArrival = input.holds.length - judged.length;
  for (const hold of judged) {
    const life = findLife(hold, truth, low, high);
    if (!life) {
      violate(
        'unknown-node',
        `${hold.holdId} (worker ${hold.worker}) held ${hold.node ?? `a node of session ${hold.sessionId}`} on ${hold.resource}, which ZooKeeper never had`,
        [hold.holdId],
      );
      continue;
    }
    // A belief cannot predate its node: the worker named the wrong node (a harness fault, not
    // the lock's), and judging admission on it would blame the lock for siblings it never had.
    if (low(life.created) > hold.acquiredAt + hold.uncertainty + 1) {
      violate(
        'node-after-belief',
        `${hold.holdId} (worker ${hold.worker}) believed it held ${life.name} on ${life.parent} ${Math.round(low(life.created) - hold.acquiredAt)} ms before ZooKeeper created it`,
        [hold.holdId],
      );
      continue;
    }
    lifeOf.set(hold.holdId, life);
    if (hold.token !== undefined && hold.token !== life.czxid) {
      violate(
        'token-mismatch',
        `${hold.holdId}: fencing token ${hold.token} but its node's czxid is ${life.czxid}`,
        [hold.holdId],
      );
    }
    // Admission: the older conflicting siblings ZooKeeper surely still had at acquiredAt.
    const margin = hold.uncertainty + 1;
    const blockers = (truth.childrenOf.get(life.parent) ?? []).filter(
      (sibling) =>
        sibling.czxid < life.czxid &&
        conflictsWith(hold.kind, parseChild(sibling.name).kind) &&
        low(sibling.created) < hold.acquiredAt &&
        (sibling.deleted === undefined || low(sibling.deleted) > hold.acquiredAt + margin),
    );
    const allowed = hold.kind === 'lease' ? input.leases - 1 : 0;
    if (blockers.length > allowed) {
      admissionFailed.add(hold.holdId);
      const names = blockers.map(
        (sibling) =>
          `${sibling.name} (session ${sibling.session}, deleted ${
            sibling.deleted === undefined
              ? 'never'
              : `${Math.round(low(sibling.deleted) - hold.acquiredAt)} ms later`
          })`,
      );
      violate(
        'admission',
        `${hold.holdId} (worker ${hold.worker}, ${hold.kind}) believed it held ${life.name} on ${life.parent} while ZooKeeper still had ${names.join(', ')}`,
        [hold.holdId],
      );
    }
  }

  // ---- losses: signalled, and within a session timeout of their fault ----
  const staleFrom = new Map<string, number>(); // holdId -> when its node was surely gone
  for (const hold of judged) {
    const life = lifeOf.get(hold.holdId);
    if (hold.endedAt === undefined) continue;
    const margin = hold.uncertainty + 1;
    const goneAt =
      life?.deleted !== undefined && high(life.deleted) < hold.endedAt - margin
        ? high(life.deleted)
        : undefined;
    if (goneAt !== undefined) {
      staleFrom.set(hold.holdId, goneAt);
      stats.staleBeliefs += 1;
      stats.staleBeliefMaxMs = Math.max(stats.staleBeliefMaxMs, hold.endedAt - goneAt);
      // Only a fault the worker could not see coming excuses it: its session closed by the
      // server while connected (expire), or its process asleep when the node went (stall).
      // Any other loss of connection is seen first (suspended) by a holder that stops then.
      const excuse = input.faults.find(
        (fault) =>
          fault.target === hold.worker &&
          ((fault.kind === 'expire' &&
            fault.start <= goneAt + margin &&
            fault.start >= hold.attemptAt - sessionTimeout) ||
            (fault.kind === 'stall' &&
              fault.start <= goneAt + margin &&
              fault.start >= hold.acquiredAt - margin)),
      );
      if (!excuse) {
        const cause = causeOf(hold, input.faults, goneAt, sessionTimeout);
        violate(
          'stale-belief',
          `${hold.holdId} (worker ${hold.worker}, ${hold.kind} on ${hold.resource}) still believed it held ${Math.round(hold.endedAt - goneAt)} ms after ZooKeeper deleted its node (${life?.deletedBy}${life?.deleterSession ? ` by ${life.deleterSession === hold.sessionId ? 'its own session' : `session ${life.deleterSession}`}` : ''}), ${cause ? `after fault #${cause.id} (${cause.kind})` : 'with no fault around'}; it ended ${hold.end === 'lost' ? `lost (${hold.reason})` : 'released'}`,
          [hold.holdId],
        );
      }
    }
    if (hold.end !== 'lost' && goneAt === undefined) continue;
    stats.lostHolds += 1;
    const limit = Math.min(hold.endedAt, goneAt ?? Number.POSITIVE_INFINITY);
    const fault = causeOf(hold, input.faults, limit, sessionTimeout);
    if (fault) {
      // A fault older than the hold is measured from the hold's start: it cannot lose earlier.
      const latency = hold.endedAt - Math.max(fault.lossReference, hold.acquiredAt);
      latencies(fault.kind).push(latency);
      if (latency > sessionTimeout + margin) {
        violate(
          'late-loss',
          `${hold.holdId} (worker ${hold.worker}) ${hold.end === 'lost' ? `learnt of its loss (${hold.reason})` : 'released'} ${Math.round(latency)} ms after fault #${fault.id} (${fault.kind}${fault.kind === 'stall' ? ' end' : ''}), more than the session timeout ${sessionTimeout} ms${goneAt !== undefined ? `; ZooKeeper had deleted its node ${Math.round(hold.endedAt - goneAt)} ms before` : ''}`,
          [hold.holdId],
        );
      }
    } else {
      stats.lossesWithoutFault += 1;
      if (goneAt !== undefined && hold.endedAt - goneAt > sessionTimeout + margin) {
        violate(
          'late-loss',
          `${hold.holdId} (worker ${hold.worker}) believed it held ${Math.round(hold.endedAt - goneAt)} ms after ZooKeeper deleted its node (no fault around), more than the session timeout ${sessionTimeout} ms`,
          [hold.holdId],
        );
      }
    }
  }
  for (const [kind, values] of latencyValues) stats.lossLatency[kind] = latencyOf(values);

  // ---- per resource: token order, belief overlaps, sharing ----
  const byResource = new Map<string, CheckedHold[]>();
  for (const hold of judged) {
    const list = byResource.get(hold.resource);
    if (list) list.push(hold);
    else byResource.set(hold.resource, [hold]);
  }
  for (const [resource, holds] of byResource) {
    holds.sort((a, b) => a.acquiredAt - b.acquiredAt);
    // Token order between conflicting holds, in admission order.
    let maxToken: { token: number; holdId: string } | undefined;
    let maxWriteToken: { token: number; holdId: string } | undefined;
    for (const hold of holds) {
      const token = hold.token ?? lifeOf.get(hold.holdId)?.czxid;
      if (token === undefined || hold.kind === 'lease') continue;
      const before = hold.kind === 'read' ? maxWriteToken : maxToken;
      if (before && token <= before.token && !admissionFailed.has(hold.holdId)) {
        violate(
          'token-order',
          `${hold.holdId} (token ${token}) was admitted on ${resource} after ${before.holdId} (token ${before.token})`,
          [before.holdId, hold.holdId],
        );
      }
      if (!maxToken || token > maxToken.token) maxToken = { token, holdId: hold.holdId };
      if (hold.kind !== 'read' && (!maxWriteToken || token > maxWriteToken.token)) {
        maxWriteToken = { token, holdId: hold.holdId };
      }
    }
    // Belief overlaps: a sweep over the holds believed at each admission.
    const active: CheckedHold[] = [];
    for (const hold of holds) {
      for (let index = active.length - 1; index >= 0; index--) {
        const other = active[index] as CheckedHold;
        if ((other.endedAt ?? Number.POSITIVE_INFINITY) <= hold.acquiredAt) active.splice(index, 1);
      }
      const sameGroup = (other: CheckedHold) => other.group === hold.group;
      const believed = active.filter((other) => !sameGroup(other));
      if (hold.kind === 'read' || hold.kind === 'lease') {
        const shared = 1 + believed.filter((other) => other.kind === hold.kind).length;
        stats.maxShared = Math.max(stats.maxShared, shared);
      }
      const leases = believed.filter((other) => other.kind === 'lease');
      const conflicting =
        hold.kind === 'lease'
          ? leases.length >= input.leases
            ? leases
            : []
          : believed.filter((other) => holdsConflict(other.kind, hold.kind));
      for (const other of conflicting) {
        const overlap = Math.min(
          other.endedAt ?? Number.POSITIVE_INFINITY,
          hold.endedAt ?? Number.POSITIVE_INFINITY,
        );
        const duration = overlap - hold.acquiredAt;
        if (duration <= other.uncertainty + hold.uncertainty + 1) continue;
        const inFlight = (candidate: CheckedHold) =>
          (staleFrom.get(candidate.holdId) ?? Number.POSITIVE_INFINITY) <= hold.acquiredAt;
        // A lease over capacity is explained when any of the others' loss was in flight.
        if (inFlight(other) || (hold.kind === 'lease' && conflicting.some(inFlight))) {
          stats.beliefOverlaps += 1;
          stats.beliefOverlapMaxMs = Math.max(stats.beliefOverlapMaxMs, duration);
        } else if (!admissionFailed.has(hold.holdId) && !admissionFailed.has(other.holdId)) {
          violate(
            'overlap',
            `${other.holdId} (worker ${other.worker}) and ${hold.holdId} (worker ${hold.worker}) both believed they held ${resource} for ${Math.round(duration)} ms, and ZooKeeper had not deleted ${other.holdId}'s node`,
            [other.holdId, hold.holdId],
          );
        }
      }
      active.push(hold);
    }
  }

  // ---- the fenced register ----
  const holdById = new Map(input.holds.map((hold) => [hold.holdId, hold]));
  const lastAccepted = new Map<string, number>();
  for (const write of input.writes) {
    if (write.accepted) {
      const last = lastAccepted.get(write.resource);
      if (last !== undefined && write.token < last) {
        violate(
          'register',
          `the register of ${write.resource} accepted token ${write.token} after ${last}`,
          [write.holdId],
        );
      }
      lastAccepted.set(write.resource, write.token);
    }
    const hold = holdById.get(write.holdId);
    const life = lifeOf.get(write.holdId);
    if (!hold || !life) continue;
    const expected = hold.token ?? life.czxid;
    if (write.token !== expected) {
      violate(
        'fence',
        `${write.holdId} wrote token ${write.token} to ${write.resource}, not its own ${expected}`,
        [write.holdId],
      );
    }
    const stale =
      life.deleted !== undefined && high(life.deleted) < write.at - hold.uncertainty - 1;
    if (stale) {
      if (write.accepted) stats.staleWritesAccepted += 1;
      else stats.staleWritesRefused += 1;
    } else if (!write.accepted) {
      violate(
        'fence',
        `the register of ${write.resource} refused ${write.holdId} (worker ${write.worker}, token ${write.token}) while ZooKeeper still had its node: a holder with token ${write.highestBefore} had written meanwhile`,
        [write.holdId],
      );
    }
  }

  for (const crash of input.crashes) violate('crash', crash);
  for (const leftover of input.leftovers) violate('leftover', `left behind: ${leftover}`);
  for (const stuck of input.noProgress) violate('no-progress', stuck);
  return { violations, stats };
}

/** The node a hold stood on: by path, or (leader terms) its session's node on the path. */
function findLife(
  hold: CheckedHold,
  truth: ZooKeeperTruth,
  low: (wall: number) => number,
  high: (wall: number) => number,
): ZnodeLife | undefined {
  if (hold.node) {
    const lives = truth.byPath.get(hold.node);
    return lives?.[lives.length - 1];
  }
  // A token is its node's czxid: unique in the whole log.
  if (hold.token !== undefined) {
    return (truth.childrenOf.get(hold.resource) ?? []).find((life) => life.czxid === hold.token);
  }
  if (!hold.sessionId) return undefined;
  const candidates = (truth.childrenOf.get(hold.resource) ?? []).filter(
    (life) =>
      life.session === hold.sessionId &&
      low(life.created) <= hold.acquiredAt + hold.uncertainty &&
      (life.deleted === undefined || high(life.deleted) >= hold.attemptAt - hold.uncertainty),
  );
  return candidates[candidates.length - 1];
}

/**
 * The fault a lost hold is measured from: the latest one aimed at its worker (or at the whole
 * fleet) that came before `limit` and not long before the hold's attempt; for a stall, its end.
 */
function causeOf(
  hold: CheckedHold,
  faults: readonly FaultRecord[],
  limit: number,
  sessionTimeout: number,
): FaultRecord | undefined {
  let cause: FaultRecord | undefined;
  for (const fault of faults) {
    if (fault.kind === 'idle-gap') continue;
    if (fault.target !== undefined && fault.target !== hold.worker) continue;
    // A stall counts if it began before the node went (it ends after: the process slept).
    const began = fault.kind === 'stall' ? fault.start : fault.lossReference;
    if (began > limit + hold.uncertainty) continue;
    const from =
      fault.kind === 'stall'
        ? hold.acquiredAt - hold.uncertainty
        : hold.attemptAt - 2 * sessionTimeout;
    if (fault.kind === 'stall' ? fault.start < from : fault.lossReference < from) continue;
    if (!cause || fault.lossReference > cause.lossReference) cause = fault;
  }
  return cause;
}
