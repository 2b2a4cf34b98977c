/**
 * One lock path kept live: a persistent recursive watch on it (`watchTree` without a snapshot:
 * one server watch however many nodes queue there, and no walk of them) keeping a copy of its
 * nodes (`LockMirror`: read whole once the watch is in place and after each gap, then a change
 * costs the reads of what changed), inspected again from the copy after each change. On a
 * server or transport without persistent watches: a child watch on the path (and a semaphore's
 * folders) and `inspect` read again after each change, coalesced.
 */
import { isZkError, type Stat, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type InspectedLock, type InspectReads, inspect } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoalescedRead } from './coalesced-read';
import { LockMirror } from './lock-mirror';

/** A kazoo Semaphore at `<path>` queues its takers on this sibling. */
const KAZOO_SEMAPHORE_LOCK = '-__lock__';

/** One read of a watched path. */
export interface LockRead {
  readonly path: string;
  /** The lock there (null: nothing lock-like now). */
  readonly lock: InspectedLock | null;
  /**
   * For a path with no lock: the pzxid of the path (of its `leases` for a Curator semaphore) —
   * the zxid of the last node that went, which `LiveState` compares across paths.
   */
  readonly pzxid: number | undefined;
  /** When it was read (ms since the epoch). */
  readonly at: number;
}

/** Reads in a row thrown away as torn before one is used anyway. */
const MAX_TORN_READS = 5;
/**
 * How long changes that keep coming may hold the copy's view back (reads always in flight):
 * then it is shown as it is, the nodes still being read missing from it for a moment.
 */
const MAX_UNSETTLED_MS = 250;

/** The lock at `path` and, when there is none, the pzxid that proves a session's end. */
async function readLock(reads: ZkClient | InspectReads, path: string): Promise<LockRead> {
  const lock = await inspect(reads, path);
  const at = Date.now();
  let pzxid: number | undefined;
  if (lock === null) {
    const stat = async (of: string): Promise<Stat | null> => {
      try {
        return (await reads.promises.get(of)).stat;
      } catch {
        return null;
      }
    };
    pzxid = ((await stat(`${path}/leases`)) ?? (await stat(path)))?.pzxid;
  }
  return { path, lock, pzxid, at };
}

/**
 * What the console learnt of its server: whether it adds persistent watches. A server before
 * 3.6 answers an addWatch Unimplemented and closes the connection: learnt once, every lock
 * watched after is watched with child watches at once (not one lost connection a lock).
 */
export interface WatchSupport {
  persistent: boolean;
}

/** The watch of one lock path; `onRead` hears each read. */
export class LockWatch {
  latest: LockRead | undefined;
  /** The last failure, cleared by the next good read. */
  problem: string | undefined;
  /** Reads through the client: every view without persistent watches. */
  private readonly reads: CoalescedRead<LockRead>;
  private readonly watches = new Map<string, Subscription>();
  /** The copies of the path (and of a kazoo semaphore's sibling), once their watch is in place. */
  private readonly mirrors = new Map<string, LockMirror>();
  /** The view comes from the copies (they were read whole once). */
  private mirrored = false;
  private scheduled: NodeJS.Immediate | undefined;
  private unsettledSince: number | undefined;
  private unsettledTimer: NodeJS.Timeout | undefined;
  /** The copies' views shown in the order they were made (the last one made wins). */
  private made = 0;
  private closed = false;
  /** `inspect`'s reads, answered by the copy that keeps the node, else by the client. */
  private readonly mirrorReads: InspectReads;

  constructor(
    private readonly client: ZkClient,
    readonly path: string,
    private readonly onRead: (watch: LockWatch) => void,
    private readonly support: WatchSupport = { persistent: true },
  ) {
    const byCopy = (of: string) => {
      for (const mirror of this.mirrors.values())
        if (mirror.ready && mirror.covers(of)) return mirror;
      return undefined;
    };
    this.mirrorReads = {
      get sessionId() {
        return client.sessionId;
      },
      promises: {
        get: (of) => (byCopy(of) ?? client.promises).get(of),
        childrenWithStat: (of) => (byCopy(of) ?? client.promises).childrenWithStat(of),
      },
    };
    this.reads = new CoalescedRead(
      () => readLock(this.client, this.path),
      {
        take: (value) => {
          if (!this.mirrored) this.show(value);
        },
        fail: (error) => {
          if (this.mirrored) return;
          this.problem = `could not read ${this.path}: ${(error as Error).message}`;
          this.onRead(this);
        },
      },
      { maxTornReads: MAX_TORN_READS },
    );
    // The copy is read once the watch is in place (a round trip: the watch reads nothing of
    // the tree itself, `snapshot: false`), so no change after its reads is missed.
    this.watch(path);
  }

  /** The view comes from the copy kept by the watch's events (not from reads of the lock). */
  get live(): boolean {
    return this.mirrored;
  }

  /** A read is in flight or queued: the view of this path is about to change. */
  get busy(): boolean {
    if (this.reads.busy && !this.mirrored) return true;
    if (this.scheduled) return true;
    for (const mirror of this.mirrors.values()) if (mirror.busy) return true;
    return false;
  }

  close(): void {
    this.closed = true;
    this.reads.close();
    if (this.scheduled) clearImmediate(this.scheduled);
    clearTimeout(this.unsettledTimer);
    for (const mirror of this.mirrors.values()) mirror.close();
    this.mirrors.clear();
    for (const subscription of this.watches.values()) subscription.unsubscribe();
    this.watches.clear();
  }

  private show(value: LockRead): void {
    this.problem = undefined;
    this.latest = value;
    this.watchSibling(value.lock);
    this.onRead(this);
  }

  private watch(path: string): void {
    if (this.closed || this.watches.has(path)) return;
    if (!this.support.persistent) return this.watchChildren(path);
    const subscription = this.client.watchTree(path, { snapshot: false }).subscribe({
      next: (event) => {
        let mirror = this.mirrors.get(path);
        if (event.type === 'resync') {
          // The watch is in place (again): the copy is read whole, from here on kept by events.
          if (!mirror) {
            mirror = new LockMirror(this.client, path, () => this.onSettled());
            this.mirrors.set(path, mirror);
          }
          mirror.load();
          this.onChanged();
          return;
        }
        mirror?.onEvent(event.type, event.path);
        this.onChanged();
      },
      error: (error: unknown) => {
        this.watches.delete(path);
        this.mirrors.get(path)?.close();
        this.mirrors.delete(path);
        if (isZkError(error, ZkErrorCode.Unimplemented)) {
          this.support.persistent = false;
          this.watchChildren(path);
        } else {
          this.problem = `watching ${path} failed: ${(error as Error).message}`;
          this.onRead(this);
        }
      },
    });
    if (!subscription.closed) this.watches.set(path, subscription);
  }

  /** A change came: the view waits for the copy's reads, at most MAX_UNSETTLED_MS. */
  private onChanged(): void {
    if (this.unsettledSince !== undefined || this.closed) return;
    this.unsettledSince = Date.now();
    this.unsettledTimer = setTimeout(() => this.schedule(), MAX_UNSETTLED_MS);
  }

  private onSettled(): void {
    for (const mirror of this.mirrors.values()) if (mirror.busy) return;
    this.schedule();
  }

  /** The view inspected again from the copies, in the next turn (changes of one turn at once). */
  private schedule(): void {
    if (this.closed || this.mirrors.size === 0) return;
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      const main = this.mirrors.get(this.path);
      if (!main?.ready && !this.mirrored) return; // not read whole yet
      clearTimeout(this.unsettledTimer);
      this.unsettledSince = undefined;
      this.mirrored = true;
      const made = ++this.made;
      readLock(this.mirrorReads, this.path).then(
        (value) => {
          if (this.closed || made !== this.made) return;
          const problem = [...this.mirrors.values()].find((mirror) => mirror.problem)?.problem;
          this.show(value);
          this.problem = problem;
        },
        (error: unknown) => {
          if (this.closed || made !== this.made) return;
          this.problem = `could not read ${this.path}: ${(error as Error).message}`;
          this.onRead(this);
        },
      );
    });
  }

  /**
   * A server or transport without persistent watches: a child watch on the path and, for a
   * Curator semaphore, on its `leases` and `locks` (data changes such as a revoke request are
   * then seen with the next change of the queue); the lock read again after each change.
   */
  private watchChildren(path: string): void {
    this.mirrored = false;
    const paths = [path, `${path}/leases`, `${path}/locks`];
    for (const each of paths) {
      if (this.watches.has(each)) continue;
      this.watches.set(
        each,
        this.client
          .watchChildren(each)
          .subscribe({ next: () => this.reads.request(), error: () => {} }),
      );
    }
  }

  /** A kazoo semaphore's takers queue on `<path>-__lock__`: watched too once it is one. */
  private watchSibling(lock: InspectedLock | null): void {
    if (lock?.kind === 'semaphore' && lock.layout === 'kazoo') {
      this.watch(`${this.path}${KAZOO_SEMAPHORE_LOCK}`);
    }
  }
}
