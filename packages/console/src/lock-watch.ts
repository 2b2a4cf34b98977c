/**
 * One lock path kept live: a persistent recursive watch on it (`watchTree`: one server watch
 * however many nodes queue there; a child watch on a server without them) and `inspect` read
 * again after each change, coalesced — a read of one lock, never of the tree around it.
 */
import { isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type InspectedLock, inspect } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoalescedRead } from './coalesced-read';

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

/** The watch of one lock path; `onRead` hears each read, `onError` each failure. */
export class LockWatch {
  latest: LockRead | undefined;
  /** The last failure, cleared by the next good read. */
  problem: string | undefined;
  private readonly reads: CoalescedRead<LockRead>;
  private readonly watches = new Map<string, Subscription>();
  private torn = 0;
  private closed = false;

  constructor(
    private readonly client: ZkClient,
    readonly path: string,
    private readonly onRead: (watch: LockWatch) => void,
  ) {
    this.reads = new CoalescedRead(() => this.read(), {
      take: (value, torn) => {
        // The first read is shown at once, torn or not: the read that follows corrects it.
        if (torn && this.latest !== undefined && this.torn < MAX_TORN_READS) {
          this.torn += 1;
          return;
        }
        this.torn = 0;
        this.problem = undefined;
        this.latest = value;
        this.watchSibling(value.lock);
        this.onRead(this);
      },
      fail: (error) => {
        this.problem = `could not read ${this.path}: ${(error as Error).message}`;
        this.onRead(this);
      },
    });
    // The first read does not wait for the watch's walk of the tree; the `resync` that ends
    // the walk reads it again, so a change between the two is not missed.
    this.reads.request();
    this.watch(path);
  }

  /** A read is in flight or queued: the view of this path is about to change. */
  get busy(): boolean {
    return this.reads.busy;
  }

  /** Reads the path again now (after a reconnection, say). */
  refresh(): void {
    this.reads.request();
  }

  close(): void {
    this.closed = true;
    this.reads.close();
    for (const subscription of this.watches.values()) subscription.unsubscribe();
    this.watches.clear();
  }

  private watch(path: string): void {
    if (this.closed || this.watches.has(path)) return;
    // `resync` comes first (the watch is in place): the first read follows it, so no change
    // between the read and the watch is missed.
    const subscription = this.client.watchTree(path).subscribe({
      next: () => this.reads.request(),
      error: (error: unknown) => {
        this.watches.delete(path);
        if (isZkError(error, ZkErrorCode.Unimplemented)) this.watchChildren(path);
        else {
          this.problem = `watching ${path} failed: ${(error as Error).message}`;
          this.onRead(this);
        }
      },
    });
    if (!subscription.closed) this.watches.set(path, subscription);
  }

  /**
   * A server or transport without persistent watches: a child watch on the path and, for a
   * Curator semaphore, on its `leases` and `locks` (data changes such as a revoke request are
   * then seen with the next change of the queue).
   */
  private watchChildren(path: string): void {
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

  private async read(): Promise<LockRead> {
    const lock = await inspect(this.client, this.path);
    const at = Date.now();
    let pzxid: number | undefined;
    if (lock === null) {
      const leases = await this.client.promises.exists(`${this.path}/leases`).catch(() => null);
      const stat = leases ?? (await this.client.promises.exists(this.path).catch(() => null));
      pzxid = stat?.pzxid;
    }
    return { path: this.path, lock, pzxid, at };
  }
}
