/**
 * Tree watches: every create, delete and data change under a path, from one persistent
 * recursive ZooKeeper watch (`addWatch`) shared by every subscriber of the path, kept across
 * reconnects and added again on a new session.
 */
import { Observable, type Subscriber } from 'rxjs';
import { errorFromRc, Rc, ZkError, ZkErrorCode } from './errors';
import { WatcherType } from './protocol/records';
import type { SessionHandle, WatchEventType } from './transport';

/**
 * One emission of `client.watchTree(root)`:
 * - `created`, `deleted`, `changed`: that happened to `path` (the root or under it);
 * - `resync`: the watch is (again) in place, from here on no change is missed. Emitted first
 *   when the watch starts (`reason: 'started'`), then after every gap in which changes may have
 *   gone unreported: a reconnection (`'reconnected'`) or a new session (`'expired'`). Read the
 *   state you need after a resync.
 */
export type TreeEvent =
  | { readonly type: 'created' | 'deleted' | 'changed'; readonly path: string }
  | {
      readonly type: 'resync';
      readonly path: string;
      readonly reason: 'started' | 'reconnected' | 'expired';
    };

/** What the tree watches need from their client. */
export interface TreeHost {
  currentHandle(): SessionHandle | undefined;
  /** Calls back once calls can reach the server again; returns a cancel function. */
  whenConnected(callback: () => void): () => void;
  isClosed(): boolean;
  /** The transport's name, for the error when it cannot add such a watch. */
  transportName(): string;
}

interface TreeEntry {
  readonly root: string;
  readonly subscribers: Set<Subscriber<TreeEvent>>;
  /** The watch is in place on the current session. */
  armed: boolean;
  adding: boolean;
  dead: boolean;
  cancelWait: (() => void) | undefined;
}

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

function isUnder(path: string, root: string): boolean {
  if (root === '/') return true;
  return path === root || (path.startsWith(root) && path.charCodeAt(root.length) === 47);
}

/** The tree watches of one client. */
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
        if (entry.armed) subscriber.next({ type: 'resync', path: root, reason: 'started' });
      } else {
        entry = {
          root,
          subscribers: new Set([subscriber]),
          armed: false,
          adding: false,
          dead: false,
          cancelWait: undefined,
        };
        this.entries.set(root, entry);
        this.add(entry, 'started');
      }
      const owned = entry;
      return () => {
        owned.subscribers.delete(subscriber);
        if (owned.subscribers.size === 0) this.drop(owned);
      };
    });
  }

  /** A watch event from the current handle. */
  onEvent(type: WatchEventType, path: string): void {
    if (type !== 'created' && type !== 'deleted' && type !== 'changed') return;
    for (const entry of this.entries.values()) {
      if (!entry.armed || !isUnder(path, entry.root)) continue;
      const event: TreeEvent = { type, path };
      for (const subscriber of [...entry.subscribers]) subscriber.next(event);
    }
  }

  /** The connection came back on the same session: the transport put the watches back. */
  onReconnected(): void {
    for (const entry of this.entries.values()) {
      if (!entry.armed) continue;
      this.emit(entry, { type: 'resync', path: entry.root, reason: 'reconnected' });
    }
  }

  /** A new session: no watch of the old one exists any more; add each again. */
  onNewSession(): void {
    for (const entry of this.entries.values()) {
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
      for (const subscriber of [...entry.subscribers]) subscriber.complete();
    }
  }

  private emit(entry: TreeEntry, event: TreeEvent): void {
    for (const subscriber of [...entry.subscribers]) subscriber.next(event);
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
        this.emit(entry, { type: 'resync', path: entry.root, reason });
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

  private drop(entry: TreeEntry): void {
    entry.dead = true;
    entry.cancelWait?.();
    entry.cancelWait = undefined;
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
