/**
 * The watches one session holds on the server, by kind, in server paths: recorded from the
 * replies of the requests that set or removed them, forgotten when their event arrives, and sent
 * again as setWatches frames (relative to the last zxid seen) on every new connection.
 */
import { Rc } from '../errors/errors';
import { EventType, WatcherType, WatchRegistration } from '../wire/codes';
import { encodeSetWatches, type WatchLists } from '../wire/records';

/** What a request in flight says about the watch it sets or removes (`PendingRequest`). */
export interface WatchingRequest {
  /** A {@link WatchRegistration}. */
  readonly watchRegistration: number;
  /** Its server path. */
  readonly watchPath: string;
  /** For removeWatches: ZooKeeper's WatcherType removed. */
  readonly removes: number;
}

/** Largest batch of watch paths in one setWatches (ClientCnxn's limit: 128 KiB). */
const SET_WATCHES_BATCH_BYTES = 128 * 1024;

/**
 * The watches a session holds on the server, by kind, in server paths. One-shot watches are
 * added when a read that set one succeeds and removed when their event arrives; persistent ones
 * stay until removed.
 */
export class ServerWatches {
  readonly data = new Set<string>();
  readonly exist = new Set<string>();
  readonly child = new Set<string>();
  readonly persistent = new Set<string>();
  readonly persistentRecursive = new Set<string>();

  get size(): number {
    return (
      this.data.size +
      this.exist.size +
      this.child.size +
      this.persistent.size +
      this.persistentRecursive.size
    );
  }

  /** Forgets the one-shot watches an event of `type` on `path` consumed on the server. */
  consume(type: number, path: string): void {
    switch (type) {
      case EventType.nodeCreated:
      case EventType.nodeDataChanged:
        this.data.delete(path);
        this.exist.delete(path);
        return;
      case EventType.nodeChildrenChanged:
        this.child.delete(path);
        return;
      case EventType.nodeDeleted:
        this.data.delete(path);
        this.exist.delete(path);
        this.child.delete(path);
        return;
    }
  }

  /** Records the watch a request set (or removed) on the server, by its outcome. */
  register(request: WatchingRequest, rc: number): void {
    const path = request.watchPath;
    switch (request.watchRegistration) {
      case WatchRegistration.data:
        if (rc === Rc.ok) this.data.add(path);
        return;
      case WatchRegistration.exists:
        if (rc === Rc.ok) this.data.add(path);
        else if (rc === Rc.noNode) this.exist.add(path);
        return;
      case WatchRegistration.child:
        if (rc === Rc.ok) this.child.add(path);
        return;
      case WatchRegistration.persistent:
        if (rc === Rc.ok) this.persistent.add(path);
        return;
      case WatchRegistration.persistentRecursive:
        if (rc === Rc.ok) this.persistentRecursive.add(path);
        return;
      case WatchRegistration.remove:
        if (rc === Rc.ok || rc === Rc.noWatcher) this.remove(request.removes, path);
        return;
    }
  }

  private remove(type: number, path: string): void {
    const any = type === WatcherType.any;
    if (any || type === WatcherType.data) {
      this.data.delete(path);
      this.exist.delete(path);
    }
    if (any || type === WatcherType.children) this.child.delete(path);
    if (any || type === WatcherType.persistent) this.persistent.delete(path);
    if (any || type === WatcherType.persistentRecursive) this.persistentRecursive.delete(path);
  }

  clear(): void {
    this.data.clear();
    this.exist.clear();
    this.child.clear();
    this.persistent.clear();
    this.persistentRecursive.clear();
  }

  /** setWatches frames for all of them (several when there are many), relative to `zxid`. */
  setWatchesFrames(zxid: number): Buffer[] {
    const frames: Buffer[] = [];
    let batch: { [K in keyof WatchLists]: string[] } = emptyLists();
    let bytes = 0;
    const kinds: Array<[keyof WatchLists, Set<string>]> = [
      ['data', this.data],
      ['exist', this.exist],
      ['child', this.child],
      ['persistent', this.persistent],
      ['persistentRecursive', this.persistentRecursive],
    ];
    for (const [kind, paths] of kinds) {
      for (const path of paths) {
        batch[kind].push(path);
        bytes += path.length;
        if (bytes >= SET_WATCHES_BATCH_BYTES) {
          frames.push(encodeSetWatches(zxid, batch));
          batch = emptyLists();
          bytes = 0;
        }
      }
    }
    if (bytes > 0 || frames.length === 0) {
      if (Object.values(batch).some((paths) => paths.length > 0)) {
        frames.push(encodeSetWatches(zxid, batch));
      }
    }
    return frames;
  }
}

function emptyLists(): { [K in keyof WatchLists]: string[] } {
  return { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
}
