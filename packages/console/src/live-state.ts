/**
 * What a live view remembers between two reads: when each hold began, and the changes between
 * reads — a lock taken, handed over, let go, or lost with its holder's session. Shared by the
 * console and `zkrx locks --watch` (@zkrx/cli's live-view.ts).
 */
import type { InspectedLock, InspectedParticipant } from '@zkrx/lock';

/** What happened to a lock between two reads. */
export type LiveEventKind = 'taken' | 'handed-over' | 'ended';

export interface LiveEvent {
  /** When the view saw it (ms since the epoch). */
  readonly at: number;
  readonly path: string;
  readonly kind: LiveEventKind;
  /** The holder whose hold ended (handed-over, ended). */
  readonly from?: InspectedParticipant;
  /** The new holder (taken, handed-over). */
  readonly to?: InspectedParticipant;
  /** How long `from` held, as far as the view knows (see `exact`). */
  readonly heldMs?: number;
  /** `heldMs` is measured from the take-over the view saw, not from the node's creation. */
  readonly exact?: boolean;
  /**
   * The hold ended with its holder's session (expired, or closed without a release), as proven
   * by `sessionEnded`; otherwise ZooKeeper does not say whether it was released or lost.
   */
  readonly lost: boolean;
}

/** How many events the view keeps. */
const KEPT_EVENTS = 100;

/**
 * The sessions proven to have ended between two reads: every node of the session is gone, from
 * two or more lock paths whose last change (pzxid) is one and the same transaction, from which
 * no other session's node went. ZooKeeper deletes a session's ephemeral nodes in the one
 * transaction that ends it (closeSession: an expiry, or a close); a client's own deletes are one
 * transaction each. A session with nodes under one lock path only proves nothing: its end reads
 * like a release (ZooKeeper tells an observer only that a node went).
 *
 * @param before The locks of the previous read.
 * @param after The locks of this read.
 * @param pzxidOf The pzxid now of a lock path that has no lock any more (undefined: unknown).
 */
export function sessionEnded(
  before: readonly InspectedLock[],
  after: readonly InspectedLock[],
  pzxidOf: (path: string) => number | undefined,
): Set<string> {
  const present = new Map<string, Set<string>>();
  const sessionsNow = new Set<string>();
  const pzxidNow = new Map<string, number>();
  for (const lock of after) {
    pzxidNow.set(lock.path, lock.pzxid);
    const nodes = new Set<string>();
    for (const participant of [...lock.holders, ...lock.waiters]) {
      nodes.add(participant.node);
      sessionsNow.add(participant.sessionId);
    }
    present.set(lock.path, nodes);
  }
  const pathsOfSession = new Map<string, Set<string>>();
  const sessionsOfPath = new Map<string, Set<string>>();
  for (const lock of before) {
    // Nodes whose parent's pzxid is the lock's: every holder (a semaphore's under `leases`)
    // and the waiters of a queue lock (a semaphore's wait under `locks`).
    const known = lock.kind === 'semaphore' ? lock.holders : [...lock.holders, ...lock.waiters];
    for (const participant of known) {
      if (present.get(lock.path)?.has(participant.node)) continue;
      const paths = pathsOfSession.get(participant.sessionId) ?? new Set<string>();
      paths.add(lock.path);
      pathsOfSession.set(participant.sessionId, paths);
      const sessions = sessionsOfPath.get(lock.path) ?? new Set<string>();
      sessions.add(participant.sessionId);
      sessionsOfPath.set(lock.path, sessions);
    }
  }
  const ended = new Set<string>();
  for (const [session, paths] of pathsOfSession) {
    if (sessionsNow.has(session) || paths.size < 2) continue;
    const zxids = new Set<number | undefined>();
    for (const path of paths) zxids.add(pzxidNow.get(path) ?? pzxidOf(path));
    const [zxid] = zxids;
    if (zxids.size !== 1 || zxid === undefined) continue;
    if ([...paths].every((path) => sessionsOfPath.get(path)?.size === 1)) ended.add(session);
  }
  return ended;
}

/** The live view's memory: the last read, when each hold began, the changes seen. */
export class LiveState {
  private last: readonly InspectedLock[] | undefined;
  private readonly since = new Map<string, number>();
  private readonly log: LiveEvent[] = [];

  /** The locks of the last read. */
  get locks(): readonly InspectedLock[] {
    return this.last ?? [];
  }

  /** The changes seen, oldest first (the last 100). */
  get events(): readonly LiveEvent[] {
    return this.log;
  }

  /** When the view saw `node` start holding; undefined if it held when the view started. */
  readonly heldSince = (node: string): number | undefined => this.since.get(node);

  /** The locks of the last read that `locks` no longer has (their pzxid proves losses). */
  missing(locks: readonly InspectedLock[]): InspectedLock[] {
    const paths = new Set(locks.map((lock) => lock.path));
    return (this.last ?? []).filter((lock) => !paths.has(lock.path));
  }

  /**
   * Stops following the locks at `paths` (a view no longer shows them): the next `update` does
   * not count them as gone, and their holds' start times are dropped.
   */
  forget(paths: ReadonlySet<string>): void {
    if (this.last === undefined) return;
    const dropped = this.last.filter((lock) => paths.has(lock.path));
    this.last = this.last.filter((lock) => !paths.has(lock.path));
    for (const lock of dropped) for (const holder of lock.holders) this.since.delete(holder.node);
  }

  /**
   * Starts following `locks` (a view shows them from now on) as they are: the next `update`
   * compares them with this read, so a lock newly shown is not reported as taken.
   */
  adopt(locks: readonly InspectedLock[]): void {
    const paths = new Set(locks.map((lock) => lock.path));
    this.last = [...(this.last ?? []).filter((lock) => !paths.has(lock.path)), ...locks];
  }

  /**
   * Takes a new read of the tree; returns the changes since the last one (none for the first).
   *
   * @param locks The read.
   * @param at When it was read.
   * @param pzxidOf The pzxid now of a lock path of `missing(locks)` (undefined: unknown).
   */
  update(
    locks: readonly InspectedLock[],
    at: number,
    pzxidOf: (path: string) => number | undefined = () => undefined,
  ): LiveEvent[] {
    const before = this.last;
    this.last = locks;
    if (before === undefined) return [];
    const ended = sessionEnded(before, locks, pzxidOf);
    const previous = new Map(before.map((lock) => [lock.path, lock]));
    const current = new Map(locks.map((lock) => [lock.path, lock]));
    const events: LiveEvent[] = [];
    for (const path of new Set([...previous.keys(), ...current.keys()])) {
      const old = previous.get(path);
      const now = current.get(path);
      const stillThere = new Set(
        now ? [...now.holders, ...now.waiters].map((participant) => participant.node) : [],
      );
      const heldBefore = new Set(old?.holders.map((participant) => participant.node) ?? []);
      const gone = (old?.holders ?? []).filter((holder) => !stillThere.has(holder.node));
      const started = (now?.holders ?? []).filter((holder) => !heldBefore.has(holder.node));
      const endOf = (from: InspectedParticipant) => {
        const exactSince = this.since.get(from.node);
        return {
          from,
          heldMs: at - (exactSince ?? from.createdAt),
          exact: exactSince !== undefined,
          lost: ended.has(from.sessionId),
        };
      };
      for (let index = 0; index < Math.max(gone.length, started.length); index++) {
        const from = gone[index];
        const to = started[index];
        if (from && to) events.push({ at, path, kind: 'handed-over', to, ...endOf(from) });
        else if (from) events.push({ at, path, kind: 'ended', ...endOf(from) });
        else if (to) events.push({ at, path, kind: 'taken', to, lost: false });
      }
      for (const holder of started) this.since.set(holder.node, at);
    }
    const live = new Set(
      locks.flatMap((lock) => lock.holders.map((participant) => participant.node)),
    );
    for (const node of [...this.since.keys()]) if (!live.has(node)) this.since.delete(node);
    this.log.push(...events);
    this.log.splice(0, Math.max(0, this.log.length - KEPT_EVENTS));
    return events;
  }
}
