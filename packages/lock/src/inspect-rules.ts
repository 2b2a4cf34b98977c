/**
 * The pure rules of `inspect`: what kind of lock a path's children make, which layout each node
 * follows, and who holds and who waits — by each recipe's own rule, from names and creation order.
 */
import { type LockChild, Marker, parseChild, SEMAPHORE_CHILDREN } from './recipe/lock-children';

/** What a lock path is, from the nodes under it. */
export type InspectedKind = 'mutex' | 'read-write' | 'semaphore' | 'election';

/**
 * Whose node names: `curator` (Curator's layout, which zkrx shares: `_c_<uuid>-lock-<seq>`,
 * `__READ__`/`__WRIT__`, `latch-`, `leases/` + `locks/`) or `kazoo` (`<hex>__lock__<seq>`,
 * `__rlock__`, a semaphore's `<hex>` leases).
 */
export type NodeLayout = 'curator' | 'kazoo';

/** A lock's layout: its nodes' one layout, or `mixed` when both libraries queue on it. */
export type InspectedLayout = NodeLayout | 'mixed';

/** What a participant asked for. */
export type ParticipantMode = 'exclusive' | 'read' | 'write' | 'candidate' | 'lease';

/** The sibling lock a kazoo Semaphore at `<path>` serialises its takers with: `<path>-__lock__`. */
export const KAZOO_SEMAPHORE_LOCK_SUFFIX = `-${Marker.kazooLock}`;

const kazooLeasePattern = /^[0-9a-f]{32}$/;

/** True for the name of a kazoo Semaphore's lease node (`uuid4().hex`, no marker). */
export function isKazooLeaseName(name: string): boolean {
  return kazooLeasePattern.test(name);
}

/**
 * True for a child that is a recipe's node: a marker zkrx, Curator or kazoo writes, followed by
 * a sequence (a downgrade's read node carries its writer's). A name with a marker and no
 * sequence is not one: kazoo's `<semaphore>-__lock__` is a path, not a lock node.
 */
export function isQueueNode(child: LockChild): boolean {
  return child.kind !== 'other' && Number.isFinite(child.order);
}

/** The layout a node name follows. */
export function layoutOfName(name: string): NodeLayout {
  return name.includes(Marker.kazooLock) ||
    name.includes(Marker.kazooRead) ||
    isKazooLeaseName(name)
    ? 'kazoo'
    : 'curator';
}

/** One layout for all, or `mixed`; `curator` for none (an idle semaphore's `leases`/`locks`). */
export function layoutOfAll(layouts: readonly NodeLayout[]): InspectedLayout {
  const distinct = new Set(layouts);
  if (distinct.size > 1) return 'mixed';
  return distinct.values().next().value ?? 'curator';
}

/**
 * The kind of queue lock whose nodes these are (queue nodes only; `lease-` nodes live under a
 * semaphore's `leases` and are not a queue). `latch-` nodes make an election (a `lock-` node
 * among them counts as a candidate, as `leader$` counts it); a read node, or Curator's
 * `__WRIT__`, a read-write lock; `lock-` and kazoo's `__lock__` alone a mutex — which is also
 * the layout of Curator's LeaderSelector, zkrx's `whileLeader` and kazoo's Election.
 */
export function queueKind(children: readonly LockChild[]): InspectedKind | undefined {
  const queue = children.filter((child) => isQueueNode(child) && child.kind !== 'lease');
  if (queue.length === 0) return undefined;
  if (queue.some((child) => child.kind === 'latch')) return 'election';
  if (queue.some((child) => child.kind === 'read' || child.name.includes(Marker.write))) {
    return 'read-write';
  }
  return 'mutex';
}

/** What a participant of a lock of `kind` asked for, from its node's kind. */
export function modeOf(child: LockChild, kind: InspectedKind): ParticipantMode {
  switch (kind) {
    case 'semaphore':
      return child.kind === 'lease' || child.kind === 'other' ? 'lease' : 'exclusive';
    case 'election':
      return 'candidate';
    case 'mutex':
      return 'exclusive';
    default:
      // A read-write lock: kazoo's `__lock__` (parsed `write`) is its WriteLock; Curator's
      // `lock-` among readers is a mutex, which readers treat as a writer.
      return child.kind === 'read' ? 'read' : child.kind === 'write' ? 'write' : 'exclusive';
  }
}

/** The children that take part in a queue lock of `kind` (the others are ignored by its rule). */
export function participantsOf(kind: InspectedKind, children: readonly LockChild[]): LockChild[] {
  if (kind === 'election') {
    return children.filter(
      (child) => isQueueNode(child) && (child.kind === 'latch' || child.kind === 'exclusive'),
    );
  }
  return children.filter((child) => isQueueNode(child) && child.kind !== 'lease');
}

/**
 * Who holds and who waits in a queue lock, `sorted` in creation order (sortChildren): the rule
 * each recipe applies to its own listing.
 *
 * - mutex, election: the first holds (leads); the others wait in order.
 * - read-write: a writer (or any exclusive node) first holds alone; otherwise every reader
 *   before the first writer holds. A read node with the key of the holding writer (a
 *   downgrade: Curator 5.5+ and zkrx name it with the writer's sequence) holds with it.
 */
export function splitQueue<T extends { readonly child: LockChild }>(
  kind: InspectedKind,
  sorted: readonly T[],
): { holders: T[]; waiters: T[] } {
  const first = sorted[0];
  if (first === undefined) return { holders: [], waiters: [] };
  if (kind !== 'read-write') return { holders: [first], waiters: sorted.slice(1) };
  if (first.child.kind !== 'read') {
    const downgraded = (entry: T) =>
      entry !== first && entry.child.kind === 'read' && entry.child.key === first.child.key;
    return {
      holders: [first, ...sorted.filter(downgraded)],
      waiters: sorted.filter((entry) => entry !== first && !downgraded(entry)),
    };
  }
  const firstWriter = sorted.findIndex((entry) => entry.child.kind !== 'read');
  const end = firstWriter < 0 ? sorted.length : firstWriter;
  return { holders: sorted.slice(0, end), waiters: sorted.slice(end) };
}

/**
 * True when a path's children are a semaphore's (Curator InterProcessSemaphoreV2 layout, which
 * zkrx's semaphore shares): `leases` and/or `locks`, nothing else. Whether their own children
 * are a semaphore's is checked by the caller (`isSemaphoreListing`).
 */
export function hasSemaphoreChildren(names: readonly string[]): boolean {
  return names.length > 0 && names.every((name) => SEMAPHORE_CHILDREN.includes(name));
}

/**
 * True when the children of `leases` and `locks` are a semaphore's: lease nodes under `leases`,
 * a mutex's nodes under `locks`, and something to show (a lease, a taker, or both parents —
 * an idle semaphore keeps them until the server reaps them).
 */
export function isSemaphoreListing(
  leases: readonly string[] | undefined,
  locks: readonly string[] | undefined,
): boolean {
  const leaseKinds = (leases ?? []).map(parseChild);
  const lockKinds = (locks ?? []).map(parseChild);
  if (!leaseKinds.every((child) => isQueueNode(child) && child.kind === 'lease')) return false;
  if (
    !lockKinds.every(
      (child) => isQueueNode(child) && (child.kind === 'exclusive' || child.kind === 'write'),
    )
  ) {
    return false;
  }
  return (
    leaseKinds.length > 0 || lockKinds.length > 0 || (leases !== undefined && locks !== undefined)
  );
}

/** What `pendingLease` needs of a node: its session and creation zxid. */
export interface NodeStamp {
  readonly sessionId: string;
  readonly czxid: number;
}

/**
 * The lease node of a taker still waiting for a free lease, if any. Curator's and zkrx's
 * semaphores create the lease node while holding the `locks` mutex, then count the leases and
 * wait while they are too many: so a waiting taker's lease node exists. It is the newest lease
 * node of the session at the head of `locks`, created after that session's `locks` node. (For
 * one round trip after such a lease is granted, before its `locks` node goes, it reads as
 * pending too.)
 */
export function pendingLease<T extends NodeStamp>(
  leases: readonly T[],
  locksHead: NodeStamp | undefined,
): T | undefined {
  if (locksHead === undefined) return undefined;
  let newest: T | undefined;
  for (const lease of leases) {
    if (lease.sessionId !== locksHead.sessionId || lease.czxid < locksHead.czxid) continue;
    if (newest === undefined || lease.czxid > newest.czxid) newest = lease;
  }
  return newest;
}
