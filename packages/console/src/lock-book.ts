/**
 * The locks the console's open pages show, each watched once however many pages show it
 * (`LockWatch`), compared read by read by one `LiveState` — the CLI's live-view memory — so
 * hand-overs, frees and losses are found as `zkrx locks --watch` finds them, and written to the
 * history.
 */
import type { ZkClient } from '@zkrx/core';
import type { InspectedLock } from '@zkrx/lock';
import type { History } from './history';
import { type LiveEvent, LiveState } from './live-state';
import { type LockRead, LockWatch, type WatchSupport } from './lock-watch';
import { SharedWatches } from './shared-watches';

/** Times in a row the comparison waits for another path's read in flight, before going on. */
const MAX_WAITS = 5;

interface Entry {
  readonly watch: LockWatch;
  /** Its first read was adopted by the LiveState (no events for what it showed then). */
  adopted: boolean;
  close(): void;
}

export class LockBook {
  private readonly entries: SharedWatches<Entry>;
  private readonly state = new LiveState();
  private readonly support: WatchSupport = { persistent: true };
  private readonly listeners = new Set<(paths: ReadonlySet<string>) => void>();
  private changed = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  private waits = 0;

  constructor(
    client: ZkClient,
    private readonly history: History,
  ) {
    this.entries = new SharedWatches<Entry>(
      (path) => {
        const watch = new LockWatch(client, path, (each) => this.onRead(each), this.support);
        return { watch, adopted: false, close: () => watch.close() };
      },
      (path) => this.state.forget(new Set([path])),
    );
  }

  /** How many lock paths are watched. */
  get size(): number {
    return this.entries.size;
  }

  /** Watches `path` while the returned function is not called (shared by every caller). */
  hold(path: string): () => void {
    return this.entries.hold(path).release;
  }

  /** The last read of `path` (undefined until its first read, or when not watched). */
  read(path: string): LockRead | undefined {
    return this.entries.get(path)?.watch.latest;
  }

  /** Why `path` could not be read lately, if it could not. */
  problem(path: string): string | undefined {
    return this.entries.get(path)?.watch.problem;
  }

  /** When the console saw `node` start holding (undefined: it held when first shown). */
  heldSince(node: string): number | undefined {
    return this.state.heldSince(node);
  }

  /** The last read of every watched lock. */
  locks(): InspectedLock[] {
    const locks: InspectedLock[] = [];
    for (const entry of this.entries.values()) {
      const lock = entry.watch.latest?.lock;
      if (lock) locks.push(lock);
    }
    return locks;
  }

  /** Calls `listener` with the paths whose view changed; returns a function that stops it. */
  onChange(listener: (paths: ReadonlySet<string>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.entries.close();
    this.listeners.clear();
  }

  private onRead(watch: LockWatch): void {
    this.changed.add(watch.path);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.compare();
    });
  }

  /**
   * Compares every path's last read with the one before. A session's end deletes its nodes
   * from every path in one transaction, and their notifications all come before the reply to
   * any read made after the first (ZooKeeper answers a session in order): so while another
   * path's read is in flight the comparison waits for it (at most MAX_WAITS times in a row),
   * and `LiveState` sees the session's nodes go from every path in one comparison — what proves
   * a loss.
   */
  private compare(): void {
    const busy = this.entries.values().some((entry) => entry.watch.busy);
    if (busy && this.waits < MAX_WAITS) {
      this.waits += 1;
      return;
    }
    this.waits = 0;
    const fresh: InspectedLock[] = [];
    const pzxids = new Map<string, number>();
    for (const entry of this.entries.values()) {
      const read = entry.watch.latest;
      if (read === undefined) continue;
      if (read.pzxid !== undefined) pzxids.set(read.path, read.pzxid);
      if (!entry.adopted) {
        entry.adopted = true;
        if (read.lock) fresh.push(read.lock);
      }
    }
    if (fresh.length > 0) this.state.adopt(fresh);
    const events = this.state.update(this.locks(), Date.now(), (path) => pzxids.get(path));
    this.history.add(events.map((event) => historyOf(event, this.kindOf(event.path))));
    const changed = this.changed;
    this.changed = new Set();
    for (const listener of this.listeners) listener(changed);
  }

  private kindOf(path: string): string | undefined {
    return this.entries.get(path)?.watch.latest?.lock?.kind;
  }
}

function historyOf(event: LiveEvent, lockKind: string | undefined) {
  return {
    at: event.at,
    scope: 'lock' as const,
    kind: event.kind,
    path: event.path,
    lockKind,
    from: event.from?.sessionId,
    fromData: event.from?.data,
    to: event.to?.sessionId,
    toData: event.to?.data,
    heldMs: event.heldMs,
    exact: event.exact,
    lost: event.lost,
  };
}
