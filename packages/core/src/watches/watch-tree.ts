/**
 * Tree watches: every create, delete and data change under a path, from one persistent
 * recursive ZooKeeper watch (`addWatch`) shared by every subscriber of the path, kept across
 * reconnects and added again on a new session — after which the tree is read again and every
 * change made meanwhile is reported, as Curator's CuratorCache and kazoo's TreeCache do.
 */
import { Observable, type Subscriber } from 'rxjs';
import { errorFromRc, isTransientRc, Rc, ZkError, ZkErrorCode } from '../errors/errors';
import type { SessionHandle, WatchEventType } from '../transport/transport';
import { WatcherType } from '../wire/codes';
import { joinPath } from '../znode/paths';
import type { Stat } from '../znode/stat';
import {
  applyChange,
  applyUnread,
  type Flight,
  gapChanges,
  isUnder,
  type NodeRecord,
  nextSnapshot,
  type Pass,
  passEvent,
  settleRead,
  type TreeChange,
  track,
  UNREADABLE_RECORD,
  uncertain,
  type Walk,
} from './tree-snapshot';
import { closeEntries } from './watch-registry';

/**
 * One emission of `client.watchTree(root)`:
 * - `created`, `deleted`, `changed`: that happened to `path` (the root or under it);
 * - `resync`: a marker. `reason: 'started'` comes first, once the watch is in place and the
 *   tree has been read: from there on every change is reported (the content the tree had then
 *   is not). After a gap in the connection — a reconnection (`'reconnected'`) or a new session
 *   (`'expired'`) — a `resync` comes first, then the changes made during the gap, found by
 *   reading the tree again, then the changes made since the watch came back. `'expired'` comes
 *   once the server has the watch again; `'reconnected'` as soon as the connection is back,
 *   before the server has processed the watch put back on it: a change made in between is one
 *   of the gap's (reported once, with them), not a live one. `'moved'` is a reconnection the
 *   client made itself, following the ensemble (a planned move to another server, with no
 *   suspension): the same gap, read again the same way.
 */
export type TreeEvent =
  | TreeChange
  | {
      readonly type: 'resync';
      readonly path: string;
      readonly reason: 'started' | 'reconnected' | 'moved' | 'expired';
    };

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

interface TreeEntry {
  readonly root: string;
  readonly subscribers: Set<Subscriber<TreeEvent>>;
  /** Subscribers still to get their `started`: the watch is not in place or a walk is on. */
  readonly joining: Set<Subscriber<TreeEvent>>;
  /**
   * Subscribers that asked for no snapshot (`snapshot: false`): their `started` comes once the
   * watch is in place, each live event at once (a walk or not), and after a gap only the
   * `resync`. While every subscriber is one, the tree is never read.
   */
  readonly bare: Set<Subscriber<TreeEvent>>;
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

  /**
   * @param root The root of the tree.
   * @param snapshot False: the subscriber reads the tree itself after each `resync` — none is
   *   read or held for it (see `bare`).
   */
  watch(root: string, snapshot = true): Observable<TreeEvent> {
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
        if (!snapshot) entry.bare.add(subscriber);
        if (entry.armed && (!snapshot || (!entry.walk && entry.snapshot))) {
          subscriber.next({ type: 'resync', path: root, reason: 'started' });
        } else {
          entry.joining.add(subscriber);
          // The first subscriber that wants a snapshot of a tree watched bare: read it now.
          if (entry.armed && !entry.walk) this.startWalk(entry);
        }
      } else {
        entry = {
          root,
          subscribers: new Set([subscriber]),
          joining: new Set([subscriber]),
          bare: new Set(snapshot ? [] : [subscriber]),
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
        owned.bare.delete(subscriber);
        if (owned.subscribers.size === 0) this.drop(owned);
        else if (!this.wantsSnapshot(owned)) this.forgetSnapshot(owned);
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
        this.emit(entry, event, entry.bare);
      } else {
        if (entry.snapshot) applyChange(entry.snapshot, type, path, true, entry.root);
        this.emit(entry, event);
      }
    }
  }

  /**
   * The connection came back on the same session (or moved to another server): the transport
   * put the watches back.
   */
  onReconnected(reason: 'reconnected' | 'moved' = 'reconnected'): void {
    for (const entry of this.entries.values()) {
      if (!entry.armed) continue;
      this.markGap(entry);
      this.emit(entry, { type: 'resync', path: entry.root, reason });
      if (this.wantsSnapshot(entry)) this.startWalk(entry);
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
    closeEntries(this.entries, (entry) => this.stopWalk(entry));
  }

  /** Sends `event` to every subscriber that has had its `started` (of `only`, if given). */
  private emit(
    entry: TreeEntry,
    event: TreeEvent,
    only?: ReadonlySet<Subscriber<TreeEvent>>,
  ): void {
    for (const subscriber of [...(only ?? entry.subscribers)]) {
      if (!entry.joining.has(subscriber)) subscriber.next(event);
    }
  }

  /** The subscribers that keep a snapshot: all but the bare ones. */
  private snapshotted(entry: TreeEntry): Set<Subscriber<TreeEvent>> {
    return new Set([...entry.subscribers].filter((subscriber) => !entry.bare.has(subscriber)));
  }

  private wantsSnapshot(entry: TreeEntry): boolean {
    return entry.subscribers.size > entry.bare.size;
  }

  /** No subscriber wants the snapshot any more: it is dropped, and a walk for it stopped. */
  private forgetSnapshot(entry: TreeEntry): void {
    this.stopWalk(entry);
    entry.snapshot = undefined;
    entry.bound = undefined;
    if (entry.armed) this.welcome(entry);
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
    handle.call('addWatch', { path: entry.root, mode: 'persistent-recursive' }, (rc) => {
      entry.adding = false;
      if (entry.dead) {
        if (rc === Rc.ok) this.remove(handle, entry.root);
        return;
      }
      if (rc === Rc.ok) {
        entry.armed = true;
        entry.handle = handle;
        if (reason === 'expired') this.emit(entry, { type: 'resync', path: entry.root, reason });
        if (this.wantsSnapshot(entry)) this.startWalk(entry);
        else this.welcome(entry);
        // Bare subscribers do not wait for the walk.
        for (const subscriber of [...entry.bare]) {
          if (!entry.joining.delete(subscriber)) continue;
          subscriber.next({ type: 'resync', path: entry.root, reason: 'started' });
        }
        return;
      }
      if (this.host.isClosed()) {
        this.drop(entry);
        for (const subscriber of [...entry.subscribers]) subscriber.complete();
        return;
      }
      if (isTransientRc(rc)) return this.retry(entry, reason);
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
                for (const name of children) queue.push(joinPath(path, name));
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
      // Bare subscribers had the live events as they came, and read the gap themselves.
      const snapshotted = this.snapshotted(entry);
      for (const event of changes) this.emit(entry, event, snapshotted);
      for (const event of walk.held) this.emit(entry, event, snapshotted);
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
    handle.call('removeWatches', { path: root, type: WatcherType.persistentRecursive }, () => {});
  }
}
