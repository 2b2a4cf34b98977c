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
 * - A hold whose node ZooKeeper had surely deleted before the belief began was never admitted
 *   then: a worker can read, after a stall, a reply ZooKeeper sent while its node was first, and
 *   believe for a node already gone. Such a belief is stale from its first moment: the
 *   stale-belief, loss-in-time and register rules judge it, not the order or overlap rules.
 * - Order (ZooKeeper's admission, from the log): a node is admitted at the zxid that deleted the
 *   last older sibling keeping it out (or at its creation). Between conflicting holds that
 *   ZooKeeper admitted, tokens strictly increase in that order, and no hold began to believe
 *   before one that ZooKeeper admitted earlier.
 * - Fencing: each hold's token is its node's czxid; the register's accepted tokens never
 *   decrease; a write the register refused must come from a holder ZooKeeper no longer admitted
 *   (a stale belief the fence stopped), never from a holder whose node was still there.
 * - Belief overlaps of conflicting holds are allowed only while a loss is in flight (one of the
 *   two nodes already gone when the overlap began): they are counted, and bounded by the
 *   loss-in-time rule.
 * - Fleet mode: each item's lock is a mutex judged by the rules above; partition-check.ts then
 *   judges balance and stickiness.
 */
import { type ChildKind, parseChild } from '@zkrx/lock/recipe';
import type { CheckedHold, FaultKind, FaultRecord } from './history';
import { checkFleet, type FleetHistory, type FleetStats } from './partition-check';
import type { HoldKind } from './protocol';
import type { RegisterWrite } from './register';
import type { ZnodeLife, ZooKeeperTruth } from './truth';
import { type Latency, latencyOf, type Violation, type ViolationKind } from './verdict';

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
  /** Fleet mode: the partition, its item sets and the joins and leaves asked. */
  readonly fleet?: FleetHistory;
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
  /** Of those, beliefs that began after ZooKeeper had deleted the node (never admitted then). */
  beliefsAfterDeletion: number;
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
  /** Fleet mode: balance and stickiness. */
  fleet?: FleetStats;
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
    beliefsAfterDeletion: 0,
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
  /** Holds whose node ZooKeeper had surely deleted before the belief began. */
  const deadAtBelief = new Set<string>();
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
    // The log's time is taken before the leader applies the change: a deletion logged at t
    // happened before t + 1 on the wall clock, so before the belief began, clocks allowing.
    if (life.deleted !== undefined && high(life.deleted) < hold.acquiredAt - hold.uncertainty - 1) {
      deadAtBelief.add(hold.holdId);
      stats.beliefsAfterDeletion += 1;
    }
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
      // server while connected (expire), or its process asleep (stall). A stall excuses it if
      // it was under way when the node went, whenever it began (before the belief too: a woken
      // worker can read a reply ZooKeeper sent while its node was first, and believe for a node
      // already gone), or if it struck the hold before the node went (a woken holder needs a
      // moment to hear of a loss its stall caused). The loss-in-time rule bounds both from the
      // stall's end. Any other loss of connection is seen first (suspended) by a holder that
      // stops then.
      const excuse = input.faults.find(
        (fault) =>
          fault.target === hold.worker &&
          ((fault.kind === 'expire' &&
            fault.start <= goneAt + margin &&
            fault.start >= hold.attemptAt - sessionTimeout) ||
            (fault.kind === 'stall' && stallCounts(fault, hold, goneAt, margin))),
      );
      if (!excuse) {
        const cause = causeOf(hold, input.faults, goneAt, goneAt, sessionTimeout);
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
    const fault = causeOf(hold, input.faults, limit, goneAt, sessionTimeout);
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
  // ZooKeeper's admission of a node, from the log: the zxid that deleted the last older sibling
  // keeping it out by the recipe's rule (a never-deleted one keeps it out for good), or its
  // creation. Conflicting holds are ordered by it, not by when their workers began to believe.
  const kindOf = new Map<ZnodeLife, ChildKind>();
  const childKind = (life: ZnodeLife): ChildKind => {
    let kind = kindOf.get(life);
    if (kind === undefined) {
      kind = parseChild(life.name).kind;
      kindOf.set(life, kind);
    }
    return kind;
  };
  // Whether ZooKeeper surely still had `life` when `hold` began to believe.
  const surelyThere = (life: ZnodeLife, hold: CheckedHold): boolean =>
    life.deleted === undefined || low(life.deleted) > hold.acquiredAt + hold.uncertainty + 1;
  const admittedAt = (hold: CheckedHold, life: ZnodeLife): number => {
    let zxid = life.czxid;
    for (const sibling of truth.childrenOf.get(life.parent) ?? []) {
      if (sibling.czxid < life.czxid && conflictsWith(hold.kind, childKind(sibling))) {
        zxid = Math.max(zxid, sibling.deletedZxid ?? Number.POSITIVE_INFINITY);
      }
    }
    return zxid;
  };
  for (const [resource, holds] of byResource) {
    // Order: between conflicting holds ZooKeeper admitted (a hold believed on a node already
    // gone was not: the stale-belief rule judges it), in ZooKeeper's admission order, tokens
    // strictly increase, and no hold began to believe before an earlier-admitted one did while
    // that one's node was surely still there (a cross-check of the admission rule).
    const admitted = holds
      .filter(
        (hold) =>
          hold.kind !== 'lease' && lifeOf.has(hold.holdId) && !deadAtBelief.has(hold.holdId),
      )
      .map((hold) => {
        const life = lifeOf.get(hold.holdId) as ZnodeLife;
        return { hold, zxid: admittedAt(hold, life), czxid: life.czxid };
      })
      .sort(
        (a, b) => a.zxid - b.zxid || a.czxid - b.czxid || a.hold.acquiredAt - b.hold.acquiredAt,
      );
    type Mark = { value: number; hold: CheckedHold };
    const higher = (mark: Mark | undefined, value: number, hold: CheckedHold): Mark =>
      !mark || value > mark.value ? { value, hold } : mark;
    let maxToken: Mark | undefined;
    let maxWriteToken: Mark | undefined;
    let lastBelief: Mark | undefined;
    let lastWriteBelief: Mark | undefined;
    for (const { hold } of admitted) {
      const token = hold.token ?? (lifeOf.get(hold.holdId) as ZnodeLife).czxid;
      const reader = hold.kind === 'read';
      const before = reader ? maxWriteToken : maxToken;
      const believer = reader ? lastWriteBelief : lastBelief;
      if (before && token <= before.value) {
        violate(
          'token-order',
          `${hold.holdId} (token ${token}) was admitted by ZooKeeper on ${resource} after ${before.hold.holdId} (token ${before.value})`,
          [before.hold.holdId, hold.holdId],
        );
      } else if (
        believer &&
        hold.acquiredAt + hold.uncertainty + believer.hold.uncertainty + 1 < believer.value &&
        surelyThere(lifeOf.get(believer.hold.holdId) as ZnodeLife, hold)
      ) {
        violate(
          'token-order',
          `${hold.holdId} (worker ${hold.worker}, token ${token}) began to believe it held ${resource} ${Math.round(believer.value - hold.acquiredAt)} ms before ${believer.hold.holdId} (worker ${believer.hold.worker}, token ${believer.hold.token ?? lifeOf.get(believer.hold.holdId)?.czxid}) did, which ZooKeeper admitted first`,
          [believer.hold.holdId, hold.holdId],
        );
      }
      maxToken = higher(maxToken, token, hold);
      lastBelief = higher(lastBelief, hold.acquiredAt, hold);
      if (!reader) {
        maxWriteToken = higher(maxWriteToken, token, hold);
        lastWriteBelief = higher(lastWriteBelief, hold.acquiredAt, hold);
      }
    }
    holds.sort((a, b) => a.acquiredAt - b.acquiredAt);
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
        // The overlap began when `hold` began to believe. A node already gone then is a loss in
        // flight (the earlier holder's) or a belief that began after its node went (`hold`'s):
        // both are stale beliefs, which the stale-belief and loss-in-time rules judge.
        const inFlight = (candidate: CheckedHold) =>
          (staleFrom.get(candidate.holdId) ?? Number.POSITIVE_INFINITY) <= hold.acquiredAt;
        // A lease over capacity is explained when any of the others' loss was in flight.
        if (
          inFlight(other) ||
          deadAtBelief.has(other.holdId) ||
          deadAtBelief.has(hold.holdId) ||
          (hold.kind === 'lease' && conflicting.some(inFlight))
        ) {
          stats.beliefOverlaps += 1;
          stats.beliefOverlapMaxMs = Math.max(stats.beliefOverlapMaxMs, duration);
        } else if (!admissionFailed.has(hold.holdId) && !admissionFailed.has(other.holdId)) {
          violate(
            'overlap',
            `${other.holdId} (worker ${other.worker}) and ${hold.holdId} (worker ${hold.worker}) both believed they held ${resource} for ${Math.round(duration)} ms, and ZooKeeper had deleted neither node when the overlap began`,
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

  if (input.fleet) {
    stats.fleet = checkFleet({
      fleet: input.fleet,
      holds: judged,
      faults: input.faults,
      truth,
      low,
      high,
      violate,
      latency: latencyOf,
      sessionTimeoutMs: input.sessionTimeoutMs,
    });
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
 * Whether a stall is part of a hold's loss: it was under way when the node went (it began before
 * the deletion's upper bound `goneAt` and ended after its lower bound `goneAt - 1`), or it began
 * during the hold and before the node went (before `limit`, the hold's end if the node never
 * went while it believed). Within `margin` of each bound.
 */
function stallCounts(
  fault: FaultRecord,
  hold: CheckedHold,
  goneAt: number | undefined,
  margin: number,
  limit = goneAt,
): boolean {
  const underWay =
    goneAt !== undefined &&
    fault.start <= goneAt + margin &&
    (fault.healedAt ?? Number.POSITIVE_INFINITY) >= goneAt - 1 - margin;
  const during =
    limit !== undefined && fault.start >= hold.acquiredAt - margin && fault.start <= limit + margin;
  return underWay || during;
}

/**
 * The fault a lost hold is measured from: the latest one aimed at its worker (or at the whole
 * fleet) that came before `limit` (the earliest of the hold's end and its node's deletion
 * `goneAt`) and not long before the hold's attempt; for a stall, its end, and a stall counts if
 * it struck the hold or was under way when the node went (`stallCounts`).
 */
function causeOf(
  hold: CheckedHold,
  faults: readonly FaultRecord[],
  limit: number,
  goneAt: number | undefined,
  sessionTimeout: number,
): FaultRecord | undefined {
  let cause: FaultRecord | undefined;
  for (const fault of faults) {
    if (fault.kind === 'idle-gap') continue;
    if (fault.target !== undefined && fault.target !== hold.worker) continue;
    if (fault.kind === 'stall') {
      if (!stallCounts(fault, hold, goneAt, hold.uncertainty, limit)) continue;
    } else if (
      fault.lossReference > limit + hold.uncertainty ||
      fault.lossReference < hold.attemptAt - 2 * sessionTimeout
    ) {
      continue;
    }
    if (!cause || fault.lossReference > cause.lossReference) cause = fault;
  }
  return cause;
}
