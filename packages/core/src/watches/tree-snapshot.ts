/**
 * What a tree watch knows of its tree, and the pure rules over it: a snapshot of records (one
 * per node), brought up to date by live events, and the changes of a gap found by comparing it
 * with the tree read again.
 */
import { parentOf } from '../znode/paths';
import type { Stat } from '../znode/stat';

/** A change event of a tree: what happened to `path` (the root or a node under it). */
export interface TreeChange {
  readonly type: 'created' | 'deleted' | 'changed';
  readonly path: string;
}

/** What happened to a node of a tree. */
export type ChangeType = TreeChange['type'];

/** A field not known (see {@link NodeRecord}). Zxids and versions are never negative. */
export const UNKNOWN = -1;

/**
 * What a tree watch knows of one node: from its last read (`getChildren2` returns the node's
 * Stat with its children's names), brought up to date by counting the live events since. The
 * counting is exact because ZooKeeper sends a persistent recursive watch one event per change,
 * in the order of the transactions and of the session's replies: a `changed` per data version
 * (every `set` adds one to `version`), a `created`/`deleted` per node — and each one adds one to
 * its parent's `cversion` (creates and deletes alike, an ephemeral node's removal with its
 * session too: `packages/docs/src/zookeeper-facts.integration.test.ts`). A field is
 * {@link UNKNOWN} when no read tells it: the czxid of a node created live, or a field that a
 * live event may or may not have changed before the read that set it.
 */
export interface NodeRecord {
  /** The zxid that created the node: tells a node deleted and created again at the same path. */
  czxid: number;
  /** The zxid of its last data change: unknown once a live `changed` came. */
  mzxid: number;
  /** Its data version. */
  version: number;
  /** Its children's version: how many children were created or deleted under it. */
  cversion: number;
}

/** The record of a node that could not be read (NoAuth, a reply too large): present, nothing more. */
export const UNREADABLE_RECORD: NodeRecord = Object.freeze({
  czxid: UNKNOWN,
  mzxid: UNKNOWN,
  version: UNKNOWN,
  cversion: UNKNOWN,
});

/** The record of a node as a Stat gives it. */
export function recordOf(stat: Stat): NodeRecord {
  return { czxid: stat.czxid, mzxid: stat.mzxid, version: stat.version, cversion: stat.cversion };
}

function createdLive(): NodeRecord {
  return { czxid: UNKNOWN, mzxid: UNKNOWN, version: 0, cversion: 0 };
}

/** What the live events of one path said since the watch came back. */
export interface LiveTrack {
  /** The first: `created` means the node was absent when the watch came back, else present. */
  readonly first: ChangeType;
  /** Whether any of them created or deleted the node. */
  lifecycle: boolean;
}

/** The live events that came while the read of a node was in flight. */
export interface Flight {
  readonly events: ChangeType[];
  /** Its children created or deleted meanwhile. */
  childOps: number;
}

/** One pass over the tree (or over some of its nodes): its records, kept current. */
export interface Pass {
  readonly id: number;
  readonly fresh: Map<string, NodeRecord>;
  /** Paths read and found absent, or deleted live after their read. */
  readonly gone: Set<string>;
  readonly inflight: Map<string, Flight>;
  /** Live events of paths not read yet: their read will show them, unless it never comes. */
  preRead: { readonly type: ChangeType; readonly path: string }[];
}

/** A reading of the whole tree, and the live events since the watch came back. */
export interface Walk {
  /**
   * After a gap: the live events are reported once the changes of the gap are out. The first
   * walk's are part of the content the tree has at `started`: not reported.
   */
  readonly catchUp: boolean;
  /** Paths with live events since the watch came back. */
  readonly live: Map<string, LiveTrack>;
  /** Per parent: its children created or deleted (live) since the watch came back. */
  readonly childOps: Map<string, number>;
  /** The live events since the watch came back, in order. */
  readonly held: TreeChange[];
  pass: Pass | undefined;
  passes: number;
  cancelWait: (() => void) | undefined;
}

export function isUnder(path: string, root: string): boolean {
  if (root === '/') return true;
  return path === root || (path.startsWith(root) && path.charCodeAt(root.length) === 47);
}

export function depth(path: string): number {
  if (path === '/') return 0;
  let count = 0;
  for (let index = 0; index < path.length; index++) if (path.charCodeAt(index) === 47) count++;
  return count;
}

export function isKnown(record: NodeRecord | undefined): record is NodeRecord {
  return record !== undefined && record !== UNREADABLE_RECORD;
}

/** One more child created or deleted under a node whose record counts them. */
function bumpChildren(record: NodeRecord | undefined): void {
  if (isKnown(record) && record.cversion !== UNKNOWN) record.cversion += 1;
}

/**
 * A live event applied to records that were current before it: a new node is known to have
 * version 0 and no children, a data change adds one to the version.
 *
 * @param records The records to update.
 * @param type The event.
 * @param path Its node.
 * @param parentToo Whether to count a creation or deletion in the parent's record too.
 * @param root The watched path (its parent is not watched).
 */
export function applyChange(
  records: Map<string, NodeRecord>,
  type: ChangeType,
  path: string,
  parentToo: boolean,
  root: string,
): void {
  if (type === 'changed') {
    const record = records.get(path);
    if (record === undefined) {
      records.set(path, { ...UNREADABLE_RECORD });
    } else if (record !== UNREADABLE_RECORD) {
      if (record.version !== UNKNOWN) record.version += 1;
      record.mzxid = UNKNOWN;
    }
    return;
  }
  if (type === 'created') records.set(path, createdLive());
  else records.delete(path);
  if (parentToo && path !== root) bumpChildren(records.get(parentOf(path)));
}

/** Whether the walk could not look at `path` because it could not read an ancestor. */
function hiddenByUnreadable(
  path: string,
  root: string,
  fresh: ReadonlyMap<string, NodeRecord>,
): boolean {
  let at = path;
  while (at !== root && at !== '/') {
    at = parentOf(at);
    if (fresh.get(at) === UNREADABLE_RECORD) return true;
  }
  return false;
}

/** Whether the data of a node that stayed the same node changed. */
function dataChanged(before: NodeRecord, now: NodeRecord, bound: number): boolean {
  if (before.version !== UNKNOWN && now.version !== UNKNOWN) return now.version !== before.version;
  // Not counted (a read raced a live change): by the zxid, as for czxid in gapChanges.
  return now.mzxid === UNKNOWN || now.mzxid > bound;
}

/**
 * The changes made during a gap: the snapshot from before it against a fresh walk made after
 * the watch came back (brought up to date with the live events since), knowing which paths had
 * live events since the watch came back — those are reported live; for them only what their
 * first live event cannot say is added. Deletions come first, deepest first; then creations,
 * shallowest first; then data changes. A node deleted and created again is `deleted` then
 * `created`.
 *
 * Whether a node is the same one: by czxid when the snapshot knows it. A node created live has
 * none; it is the same one when its parent (the same node itself) shows no more children
 * created or deleted during the gap (its cversion, less the live ones) than the names that
 * appeared or went under it — a name deleted and created again counts two. Otherwise its czxid
 * is compared with `bound`: every creation up to the last zxid the session saw before the gap
 * was delivered live, so a larger czxid is a creation during the gap, or one delivered live
 * after the session's last reply, reported again (the at-least-once window).
 *
 * @param root The watched path.
 * @param snapshot The tree before the gap.
 * @param fresh The tree as read after it, current.
 * @param live The paths with live events since the watch came back.
 * @param childOps Per parent, its children created or deleted live since then.
 * @param bound The last zxid the session saw before the gap.
 * @return The events to report, in order.
 */
export function gapChanges(
  root: string,
  snapshot: ReadonlyMap<string, NodeRecord>,
  fresh: ReadonlyMap<string, NodeRecord>,
  live: ReadonlyMap<string, LiveTrack>,
  childOps: ReadonlyMap<string, number>,
  bound: number,
): TreeChange[] {
  const deleted: string[] = [];
  const created: string[] = [];
  const changed: string[] = [];
  /** Per parent: names that appeared or went under it during the gap. */
  const appeared = new Map<string, number>();
  const count = (path: string) => {
    if (path === root) return;
    const parent = parentOf(path);
    appeared.set(parent, (appeared.get(parent) ?? 0) + 1);
  };
  /** Nodes in both, whether they stayed the same node decided once `appeared` is complete. */
  const kept: { path: string; dataCovered: boolean }[] = [];
  for (const [path, before] of snapshot) {
    const now = fresh.get(path);
    const track = live.get(path);
    if (track) {
      // Its first live event says whether it existed when the watch came back; its data
      // changes during the gap are covered by the live `changed` or `deleted`.
      if (track.first === 'created') {
        deleted.push(path);
        count(path);
      } else if (!track.lifecycle && isKnown(before) && isKnown(now)) {
        kept.push({ path, dataCovered: true });
      }
      continue;
    }
    if (!now) {
      if (!hiddenByUnreadable(path, root, fresh)) {
        deleted.push(path);
        count(path);
      }
    } else if (isKnown(before) && isKnown(now)) {
      kept.push({ path, dataCovered: false });
    }
  }
  for (const path of fresh.keys()) {
    if (!snapshot.has(path) && live.get(path)?.first !== 'created') {
      created.push(path);
      count(path);
    }
  }
  for (const [path, track] of live) {
    // Present when the watch came back, unknown before, gone before the walk read it.
    if (track.first !== 'created' && !snapshot.has(path) && !fresh.has(path)) {
      created.push(path);
      count(path);
    }
  }

  const sameNodes = new Map<string, boolean>();
  const sameNode = (path: string): boolean => {
    const known = sameNodes.get(path);
    if (known !== undefined) return known;
    const before = snapshot.get(path);
    const now = fresh.get(path);
    let same: boolean;
    if (!isKnown(before) || !isKnown(now) || live.get(path)?.lifecycle) same = false;
    else if (before.czxid !== UNKNOWN) same = now.czxid === before.czxid;
    else same = childrenAccountedFor(path) || now.czxid <= bound;
    sameNodes.set(path, same);
    return same;
  };
  const childrenAccountedFor = (path: string): boolean => {
    if (path === root) return false;
    const parent = parentOf(path);
    const before = snapshot.get(parent);
    const now = fresh.get(parent);
    if (!isKnown(before) || !isKnown(now)) return false;
    if (before.cversion === UNKNOWN || now.cversion === UNKNOWN || !sameNode(parent)) return false;
    const duringGap = now.cversion - (childOps.get(parent) ?? 0) - before.cversion;
    return duringGap === (appeared.get(parent) ?? 0);
  };
  for (const { path, dataCovered } of kept) {
    if (!sameNode(path)) {
      deleted.push(path);
      created.push(path);
    } else if (!dataCovered) {
      const before = snapshot.get(path) as NodeRecord;
      const now = fresh.get(path) as NodeRecord;
      if (dataChanged(before, now, bound)) changed.push(path);
    }
  }

  deleted.sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  created.sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : 1));
  changed.sort();
  return [
    ...deleted.map((path): TreeChange => ({ type: 'deleted', path })),
    ...created.map((path): TreeChange => ({ type: 'created', path })),
    ...changed.map((path): TreeChange => ({ type: 'changed', path })),
  ];
}

/**
 * The snapshot after a walk: the walk's records (current), and the previous records of nodes
 * the walk could not reach (under an unreadable node). Reuses `fresh`.
 *
 * @param root The watched path.
 * @param previous The snapshot before the walk (empty for the first).
 * @param fresh The walk's records; becomes the result.
 * @return The new snapshot.
 */
export function nextSnapshot(
  root: string,
  previous: ReadonlyMap<string, NodeRecord>,
  fresh: Map<string, NodeRecord>,
): Map<string, NodeRecord> {
  const carried: [string, NodeRecord][] = [];
  for (const [path, record] of previous) {
    if (!fresh.has(path) && hiddenByUnreadable(path, root, fresh)) carried.push([path, record]);
  }
  for (const [path, record] of carried) fresh.set(path, record);
  return fresh;
}

/**
 * The record a read gives, with the live events that came while it was in flight (the read
 * may show any prefix of them): what they leave certain is kept, the rest is unknown.
 *
 * @param stat The node's Stat, or undefined when the read found no node.
 * @param flight The live events meanwhile.
 * @return The record, or undefined when the node is gone.
 */
export function settleRead(stat: Stat | undefined, flight: Flight): NodeRecord | undefined {
  const { events, childOps } = flight;
  const lastLifecycle = events.findLastIndex((type) => type !== 'changed');
  if (lastLifecycle === -1) {
    if (!stat) return undefined;
    const record = recordOf(stat);
    if (events.length > 0) {
      record.version = UNKNOWN;
      record.mzxid = UNKNOWN;
    }
    if (childOps > 0) record.cversion = UNKNOWN;
    return record;
  }
  if (events[lastLifecycle] === 'deleted') return undefined;
  // Created again meanwhile: a new node, changed since as many times as events say.
  return {
    czxid: UNKNOWN,
    mzxid: UNKNOWN,
    version: events.length - 1 - lastLifecycle,
    cversion: childOps > 0 ? UNKNOWN : 0,
  };
}

export function track(walk: Walk, type: ChangeType, path: string, root: string): void {
  const known = walk.live.get(path);
  if (known) known.lifecycle ||= type !== 'changed';
  else walk.live.set(path, { first: type, lifecycle: type !== 'changed' });
  if (type !== 'changed' && path !== root) {
    const parent = parentOf(path);
    walk.childOps.set(parent, (walk.childOps.get(parent) ?? 0) + 1);
  }
}

/** A live event during a pass: to the records it is sure about, or noted as uncertain. */
export function passEvent(pass: Pass, type: ChangeType, path: string, root: string): void {
  const flight = pass.inflight.get(path);
  if (flight) flight.events.push(type);
  else if (pass.fresh.has(path) || pass.gone.has(path)) {
    applyChange(pass.fresh, type, path, false, root);
    if (type === 'deleted') pass.gone.add(path);
    else pass.gone.delete(path);
  } else {
    pass.preRead.push({ type, path });
  }
  if (type === 'changed' || path === root) return;
  const parent = parentOf(path);
  const parentFlight = pass.inflight.get(parent);
  if (parentFlight) parentFlight.childOps += 1;
  // A parent not read yet will show it; one never read is counted in applyUnread.
  else bumpChildren(pass.fresh.get(parent));
}

/** The live events of paths the pass never read (created after their parent's read). */
export function applyUnread(pass: Pass, root: string): void {
  const unread = new Set<string>();
  for (const { path } of pass.preRead) {
    if (!pass.fresh.has(path) && !pass.gone.has(path)) unread.add(path);
  }
  for (const { type, path } of pass.preRead) {
    if (!unread.has(path)) continue;
    applyChange(pass.fresh, type, path, false, root);
    if (type === 'deleted') pass.gone.add(path);
    else pass.gone.delete(path);
    if (type !== 'changed' && path !== root && unread.has(parentOf(path))) {
      bumpChildren(pass.fresh.get(parentOf(path)));
    }
  }
  pass.preRead = [];
}

/** The paths whose version or children's version a live event left unknown. */
export function uncertain(records: ReadonlyMap<string, NodeRecord>): string[] {
  const paths: string[] = [];
  for (const [path, record] of records) {
    if (record === UNREADABLE_RECORD) continue;
    if (record.version === UNKNOWN || record.cversion === UNKNOWN) paths.push(path);
  }
  return paths;
}
