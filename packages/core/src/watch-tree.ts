/**
 * Tree watches: every create, delete and data change under a path, from one persistent
 * recursive ZooKeeper watch (`addWatch`) shared by every subscriber of the path, kept across
 * reconnects and added again on a new session — after which the tree is read again and every
 * change made meanwhile is reported, as Curator's CuratorCache and kazoo's TreeCache do.
 */
import { Observable, type Subscriber } from 'rxjs';
import { errorFromRc, Rc, ZkError, ZkErrorCode } from './errors';
import { WatcherType } from './protocol/records';
import type { Stat } from './stat';
import type { SessionHandle, WatchEventType } from './transport';

/**
 * One emission of `client.watchTree(root)`:
 * - `created`, `deleted`, `changed`: that happened to `path` (the root or under it);
 * - `resync`: a marker. `reason: 'started'` comes first, once the watch is in place and the
 *   tree has been read: from there on every change is reported (the content the tree had then
 *   is not). After a gap in the connection — a reconnection (`'reconnected'`) or a new session
 *   (`'expired'`) — a `resync` comes first, then the changes made during the gap, found by
 *   reading the tree again, then the changes made since the watch came back.
 */
export type TreeEvent =
  | { readonly type: 'created' | 'deleted' | 'changed'; readonly path: string }
  | {
      readonly type: 'resync';
      readonly path: string;
      readonly reason: 'started' | 'reconnected' | 'expired';
    };

/** A change event of a tree. */
export type TreeChange = Extract<TreeEvent, { type: 'created' | 'deleted' | 'changed' }>;
type ChangeType = TreeChange['type'];

/** What the tree watches need from their client. */
export interface TreeHost {
  currentHandle(): SessionHandle | undefined;
  /** Calls back once calls can reach the server again; returns a cancel function. */
  whenConnected(callback: () => void): () => void;
  isClosed(): boolean;
  /** The transport's name, for the error when it cannot add such a watch. */
  transportName(): string;
  /** The client's `childrenWithStat` (retried after a lost connection like every read). */
  childrenWithStat(path: string): Promise<{ readonly children: readonly string[]; stat: Stat }>;
}

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
interface Flight {
  readonly events: ChangeType[];
  /** Its children created or deleted meanwhile. */
  childOps: number;
}

/** One pass over the tree (or over some of its nodes): its records, kept current. */
interface Pass {
  readonly id: number;
  readonly fresh: Map<string, NodeRecord>;
  /** Paths read and found absent, or deleted live after their read. */
  readonly gone: Set<string>;
  readonly inflight: Map<string, Flight>;
  /** Live events of paths not read yet: their read will show them, unless it never comes. */
  preRead: { readonly type: ChangeType; readonly path: string }[];
}

/** A reading of the whole tree, and the live events since the watch came back. */
interface Walk {
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

interface TreeEntry {
  readonly root: string;
  readonly subscribers: Set<Subscriber<TreeEvent>>;
  /** Subscribers still to get their `started`: the watch is not in place or a walk is on. */
  readonly joining: Set<Subscriber<TreeEvent>>;
  /** The watch is in place on the current session. */
  armed: boolean;
  adding: boolean;
  dead: boolean;
  cancelWait: (() => void) | undefined;
  /** The session the watch was last put in place on. */
  handle: SessionHandle | undefined;
  /** The tree as last read, kept up to date from live events; undefined until the first walk. */
  snapshot: Map<string, NodeRecord> | undefined;
  walk: Walk | undefined;
  /**
   * From the first gap after the snapshot was up to date until a catch-up walk ends: the last
   * zxid the session saw before the gap (every live event of a change up to it was delivered).
   */
  bound: number | undefined;
}

/** Reads of one walk in flight at once (each is one `getChildren2`, pipelined). */
const WALK_CONCURRENCY = 32;
/** Extra passes over the nodes a live event left uncertain during a walk. */
const SETTLE_PASSES = 3;

function isTransient(rc: number): boolean {
  return (
    rc === Rc.connectionLoss ||
    rc === Rc.operationTimeout ||
    rc === Rc.closing ||
    rc === Rc.sessionExpired ||
    rc === Rc.sessionMoved ||
    rc === Rc.marshallingError
  );
}

/** A read failed because the connection or the session did, not because of the node. */
function isInterruption(error: unknown): boolean {
  if (!ZkError.isInstance(error)) return false;
  return (
    error.isRetryable ||
    error.code === ZkErrorCode.SessionExpired ||
    error.code === ZkErrorCode.ClientClosed ||
    error.code === ZkErrorCode.ConnectTimeout
  );
}

function isUnder(path: string, root: string): boolean {
  if (root === '/') return true;
  return path === root || (path.startsWith(root) && path.charCodeAt(root.length) === 47);
}

function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

function parentPath(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

function depth(path: string): number {
  if (path === '/') return 0;
  let count = 0;
  for (let index = 0; index < path.length; index++) if (path.charCodeAt(index) === 47) count++;
  return count;
}

function isKnown(record: NodeRecord | undefined): record is NodeRecord {
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
  if (parentToo && path !== root) bumpChildren(records.get(parentPath(path)));
}

/** Whether the walk could not look at `path` because it could not read an ancestor. */
function hiddenByUnreadable(
  path: string,
  root: string,
  fresh: ReadonlyMap<string, NodeRecord>,
): boolean {
  let at = path;
  while (at !== root && at !== '/') {
    at = parentPath(at);
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
    const parent = parentPath(path);
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
    const parent = parentPath(path);
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

function track(walk: Walk, type: ChangeType, path: string, root: string): void {
  const known = walk.live.get(path);
  if (known) known.lifecycle ||= type !== 'changed';
  else walk.live.set(path, { first: type, lifecycle: type !== 'changed' });
  if (type !== 'changed' && path !== root) {
    const parent = parentPath(path);
    walk.childOps.set(parent, (walk.childOps.get(parent) ?? 0) + 1);
  }
}

/** A live event during a pass: to the records it is sure about, or noted as uncertain. */
function passEvent(pass: Pass, type: ChangeType, path: string, root: string): void {
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
  const parent = parentPath(path);
  const parentFlight = pass.inflight.get(parent);
  if (parentFlight) parentFlight.childOps += 1;
  // A parent not read yet will show it; one never read is counted in applyUnread.
  else bumpChildren(pass.fresh.get(parent));
}

/** The live events of paths the pass never read (created after their parent's read). */
function applyUnread(pass: Pass, root: string): void {
  const unread = new Set<string>();
  for (const { path } of pass.preRead) {
    if (!pass.fresh.has(path) && !pass.gone.has(path)) unread.add(path);
  }
  for (const { type, path } of pass.preRead) {
    if (!unread.has(path)) continue;
    applyChange(pass.fresh, type, path, false, root);
    if (type === 'deleted') pass.gone.add(path);
    else pass.gone.delete(path);
    if (type !== 'changed' && path !== root && unread.has(parentPath(path))) {
      bumpChildren(pass.fresh.get(parentPath(path)));
    }
  }
  pass.preRead = [];
}

/**
 * The tree watches of one client.
 *
 * Each keeps a snapshot of its tree — per node a {@link NodeRecord} (czxid, mzxid, version,
 * cversion) in a `Map` keyed by path — read once the watch is in place and kept current by
 * counting live events. After a gap it reads the tree again (one `getChildren2` per node,
 * {@link WALK_CONCURRENCY} at a time, through the client's retried reads), applies the live
 * events that come meanwhile to what it has read, and reports the difference
 * ({@link gapChanges}), then the live events since the watch came back, held until then; a
 * path with live events is judged from them, so nothing is reported twice.
 *
 * Guarantees and their limits:
 * - A data change is told by the version, counted from live events: exact. A node whose read
 *   raced a live change of it is read again ({@link SETTLE_PASSES} times at most); one still
 *   uncertain is judged by its mzxid against the last zxid the session saw before the gap
 *   (`SessionHandle.lastZxidSeen`): reported again if it changed after the session's last
 *   reply (at least once, never lost).
 * - A node deleted and created again is told by czxid; for a node created live (czxid unknown)
 *   by its parent's cversion, and when that cannot tell (its parent also had a name created and
 *   deleted, or deleted and created, during the gap) by czxid against that same zxid — the
 *   same at-least-once window.
 * - Changes during the gap collapse: a node created and deleted during it is not reported, a
 *   node changed twice is reported once.
 * - A gap before the first walk has ended only makes that walk start again: `started` is not
 *   out yet, so what changed is part of the content the tree has at `started`.
 * - A node that cannot be read (NoAuth) is known by its existence, and what is under it by
 *   live events, only.
 *
 * Memory: see {@link NodeRecord}; the snapshot holds one entry per node under the root (bytes
 * per node in the core README, measured by `packages/bench/src/tools/watch-tree-memory.ts`),
 * and a second map of the same size while a walk is in progress.
 */
export class TreeWatches {
  private readonly entries = new Map<string, TreeEntry>();

  constructor(private readonly host: TreeHost) {}

  watch(root: string): Observable<TreeEvent> {
    return new Observable<TreeEvent>((subscriber) => {
      if (this.host.isClosed()) {
        subscriber.error(
          new ZkError(ZkErrorCode.ClientClosed, `watchTree ${root}: the client is closed`, {
            path: root,
          }),
        );
        return;
      }
      let entry = this.entries.get(root);
      if (entry) {
        entry.subscribers.add(subscriber);
        if (entry.armed && !entry.walk) {
          subscriber.next({ type: 'resync', path: root, reason: 'started' });
        } else {
          entry.joining.add(subscriber);
        }
      } else {
        entry = {
          root,
          subscribers: new Set([subscriber]),
          joining: new Set([subscriber]),
          armed: false,
          adding: false,
          dead: false,
          cancelWait: undefined,
          handle: undefined,
          snapshot: undefined,
          walk: undefined,
          bound: undefined,
        };
        this.entries.set(root, entry);
        this.add(entry, 'started');
      }
      const owned = entry;
      return () => {
        owned.subscribers.delete(subscriber);
        owned.joining.delete(subscriber);
        if (owned.subscribers.size === 0) this.drop(owned);
      };
    });
  }

  /** A watch event from the current handle. */
  onEvent(type: WatchEventType, path: string): void {
    if (type !== 'created' && type !== 'deleted' && type !== 'changed') return;
    for (const entry of this.entries.values()) {
      if (!entry.armed || !isUnder(path, entry.root)) continue;
      const event: TreeChange = { type, path };
      const walk = entry.walk;
      if (walk) {
        track(walk, type, path, entry.root);
        if (walk.pass) passEvent(walk.pass, type, path, entry.root);
        walk.held.push(event);
      } else {
        if (entry.snapshot) applyChange(entry.snapshot, type, path, true, entry.root);
        this.emit(entry, event);
      }
    }
  }

  /** The connection came back on the same session: the transport put the watches back. */
  onReconnected(): void {
    for (const entry of this.entries.values()) {
      if (!entry.armed) continue;
      this.markGap(entry);
      this.emit(entry, { type: 'resync', path: entry.root, reason: 'reconnected' });
      this.startWalk(entry);
    }
  }

  /** A new session: no watch of the old one exists any more; add each again. */
  onNewSession(): void {
    for (const entry of this.entries.values()) {
      this.markGap(entry);
      this.stopWalk(entry);
      entry.armed = false;
      entry.cancelWait?.();
      entry.cancelWait = undefined;
      if (!entry.adding) this.add(entry, 'expired');
    }
  }

  /** The client closed: every stream completes. */
  close(): void {
    const entries = [...this.entries.values()];
    this.entries.clear();
    for (const entry of entries) {
      entry.dead = true;
      entry.cancelWait?.();
      this.stopWalk(entry);
      for (const subscriber of [...entry.subscribers]) subscriber.complete();
    }
  }

  /** Sends `event` to every subscriber that has had its `started`. */
  private emit(entry: TreeEntry, event: TreeEvent): void {
    for (const subscriber of [...entry.subscribers]) {
      if (!entry.joining.has(subscriber)) subscriber.next(event);
    }
  }

  /** The subscribers that joined while the watch was not in place or a walk was on get `started`. */
  private welcome(entry: TreeEntry): void {
    const joining = [...entry.joining];
    entry.joining.clear();
    for (const subscriber of joining) {
      if (entry.subscribers.has(subscriber)) {
        subscriber.next({ type: 'resync', path: entry.root, reason: 'started' });
      }
    }
  }

  /** A gap begins for an entry: remember the last zxid its session saw before it. */
  private markGap(entry: TreeEntry): void {
    if (!entry.snapshot || entry.bound !== undefined) return;
    // Read before any reply on the new connection (the walk's reads go out after this).
    entry.bound = entry.handle?.lastZxidSeen ?? 0;
  }

  private add(entry: TreeEntry, reason: 'started' | 'expired'): void {
    if (entry.dead) return;
    const handle = this.host.currentHandle();
    if (!handle) return this.retry(entry, reason);
    entry.adding = true;
    handle.addWatch(entry.root, 'persistent-recursive', (rc) => {
      entry.adding = false;
      if (entry.dead) {
        if (rc === Rc.ok) this.remove(handle, entry.root);
        return;
      }
      if (rc === Rc.ok) {
        entry.armed = true;
        entry.handle = handle;
        if (reason === 'expired') this.emit(entry, { type: 'resync', path: entry.root, reason });
        this.startWalk(entry);
        return;
      }
      if (this.host.isClosed()) {
        this.drop(entry);
        for (const subscriber of [...entry.subscribers]) subscriber.complete();
        return;
      }
      if (isTransient(rc)) return this.retry(entry, reason);
      this.drop(entry);
      const error =
        rc === Rc.unimplemented && this.host.transportName() !== 'typescript'
          ? new ZkError(
              ZkErrorCode.Unimplemented,
              `watchTree ${entry.root}: the ${this.host.transportName()} transport cannot add persistent watches; use the default (TypeScript) transport`,
              { path: entry.root, rc },
            )
          : errorFromRc(rc, 'watchTree', entry.root);
      for (const subscriber of [...entry.subscribers]) subscriber.error(error);
    });
  }

  private retry(entry: TreeEntry, reason: 'started' | 'expired'): void {
    entry.cancelWait = this.host.whenConnected(() => {
      entry.cancelWait = undefined;
      this.add(entry, reason);
    });
  }

  /**
   * Starts reading the whole tree (again), the watch being in place: the first reading makes
   * the snapshot (then `started`), a later one (after a gap) reports what changed.
   */
  private startWalk(entry: TreeEntry): void {
    this.stopWalk(entry);
    const walk: Walk = {
      catchUp: entry.snapshot !== undefined,
      live: new Map(),
      childOps: new Map(),
      held: [],
      pass: undefined,
      passes: 0,
      cancelWait: undefined,
    };
    entry.walk = walk;
    this.runPass(entry, walk, undefined);
  }

  private stopWalk(entry: TreeEntry): void {
    const walk = entry.walk;
    if (!walk) return;
    walk.pass = undefined;
    walk.cancelWait?.();
    walk.cancelWait = undefined;
    entry.walk = undefined;
  }

  /**
   * One pass: over the whole tree from the root (`settle` undefined), or over the given nodes
   * of the last pass whose records a live event left uncertain. A transient failure starts the
   * whole walk's reading again once connected (the live events since the watch came back stay).
   */
  private runPass(entry: TreeEntry, walk: Walk, settle: Pass | undefined): void {
    walk.passes += 1;
    const pass: Pass = {
      id: walk.passes,
      fresh: settle?.fresh ?? new Map(),
      gone: settle?.gone ?? new Set(),
      inflight: new Map(),
      preRead: [],
    };
    walk.pass = pass;
    const current = () => walk.pass === pass && entry.walk === walk && !entry.dead;
    // A read is in flight from its call to its continuation. That is longer than on the wire
    // (an event that follows the reply in the same chunk is dispatched before the promise's
    // continuation runs): such an event counts as racing the read, which only makes the
    // record uncertain, to be read again — never wrong.

    const queue: string[] = settle ? uncertain(pass.fresh) : [entry.root];
    let active = 0;
    const pump = (): void => {
      while (active < WALK_CONCURRENCY && queue.length > 0) {
        const path = queue.pop() as string;
        const flight: Flight = { events: [], childOps: 0 };
        pass.inflight.set(path, flight);
        active += 1;
        this.host.childrenWithStat(path).then(
          ({ children, stat }) => {
            active -= 1;
            if (!current()) return;
            pass.inflight.delete(path);
            const record = settleRead(stat, flight);
            if (record) {
              pass.fresh.set(path, record);
              pass.gone.delete(path);
              // Its listing is of the node read, unless it was created again meanwhile.
              if (!settle && flight.events.every((type) => type === 'changed')) {
                for (const name of children) queue.push(childPath(path, name));
              }
            } else {
              pass.fresh.delete(path);
              pass.gone.add(path);
            }
            pump();
          },
          (error: unknown) => {
            active -= 1;
            if (!current()) return;
            pass.inflight.delete(path);
            if (ZkError.isInstance(error) && error.code === ZkErrorCode.NoNode) {
              const record = settleRead(undefined, flight);
              if (record) {
                pass.fresh.set(path, record);
                pass.gone.delete(path);
              } else {
                pass.fresh.delete(path);
                pass.gone.add(path);
              }
              return pump();
            }
            if (isInterruption(error)) return this.interrupted(entry, walk);
            pass.fresh.set(path, UNREADABLE_RECORD);
            pump();
          },
        );
      }
      if (active === 0 && queue.length === 0) this.passed(entry, walk, pass);
    };
    pump();
  }

  /** A pass ended: settle what it left uncertain, or end the walk. */
  private passed(entry: TreeEntry, walk: Walk, pass: Pass): void {
    applyUnread(pass, entry.root);
    if (walk.passes <= SETTLE_PASSES && uncertain(pass.fresh).length > 0) {
      return this.runPass(entry, walk, pass);
    }
    this.walked(entry, walk, pass.fresh);
  }

  private interrupted(entry: TreeEntry, walk: Walk): void {
    walk.pass = undefined;
    if (this.host.isClosed()) return;
    walk.cancelWait = this.host.whenConnected(() => {
      walk.cancelWait = undefined;
      if (entry.walk === walk && !entry.dead) {
        walk.passes = 0;
        this.runPass(entry, walk, undefined);
      }
    });
  }

  /** A walk ended: the snapshot is current; after a gap, what changed is reported. */
  private walked(entry: TreeEntry, walk: Walk, fresh: Map<string, NodeRecord>): void {
    entry.walk = undefined;
    const previous = entry.snapshot ?? new Map<string, NodeRecord>();
    const changes = walk.catchUp
      ? gapChanges(entry.root, previous, fresh, walk.live, walk.childOps, entry.bound ?? 0)
      : [];
    entry.snapshot = nextSnapshot(entry.root, previous, fresh);
    entry.bound = undefined;
    if (walk.catchUp) {
      for (const event of changes) this.emit(entry, event);
      for (const event of walk.held) this.emit(entry, event);
    }
    this.welcome(entry);
  }

  private drop(entry: TreeEntry): void {
    entry.dead = true;
    entry.cancelWait?.();
    entry.cancelWait = undefined;
    this.stopWalk(entry);
    if (this.entries.get(entry.root) !== entry) return;
    this.entries.delete(entry.root);
    const handle = this.host.currentHandle();
    if (entry.armed && handle) this.remove(handle, entry.root);
    entry.armed = false;
  }

  private remove(handle: SessionHandle, root: string): void {
    if (this.host.isClosed()) return;
    // Best effort: a watch left behind by a lost connection ends with the session.
    handle.removeWatches(root, WatcherType.persistentRecursive, () => {});
  }
}

/** The paths whose version or children's version a live event left unknown. */
function uncertain(records: ReadonlyMap<string, NodeRecord>): string[] {
  const paths: string[] = [];
  for (const [path, record] of records) {
    if (record === UNREADABLE_RECORD) continue;
    if (record.version === UNKNOWN || record.cversion === UNKNOWN) paths.push(path);
  }
  return paths;
}
