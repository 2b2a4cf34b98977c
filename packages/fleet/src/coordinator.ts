/**
 * The coordinator of a partition: the member holding the mutex at `<path>/coordinator` computes
 * the assignment from the live members, its item set, the poison items and the last assignment's
 * owners, and writes it as the data of `<path>/members`. Advice only: who holds an item is
 * decided by the item's lock (partition.ts), never here.
 */
import { isZkError, joinPath, type Stat, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { LockLostError, mutex } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { assign } from './assign';
import { encodeAssignment } from './assignment-record';
import { PartitionProblemError, type PartitionTask } from './errors';
import type { Member } from './members';
import { coordinatorPath, membersPath, poisonPath } from './options';
import { decodePoisonReport, type PoisonedItem } from './poison';

/** What the coordinator computes from, as its member sees it now. */
export interface CoordinatorInputs {
  /** The live members in id order; undefined before the first listing. */
  members(): readonly Member[] | undefined;
  /** The sorted item set and its digest; undefined before the first. */
  items(): { readonly items: readonly string[]; readonly digest: string } | undefined;
  /** `<path>/members` as last read (its data version and data); undefined before the first read. */
  assignmentNode(): { readonly version: number; readonly data: Buffer } | undefined;
  /** Each item's owner-to-be in the last assignment this member could read (by name). */
  previousOwners(): ReadonlyMap<string, string>;
}

/** The largest assignment written: ZooKeeper's default limit is 1 MB a request. */
const MAX_ASSIGNMENT_BYTES = 1_000_000;

const ignore = () => {};

/** How long the poison reports' watch waits before it is set again after failing (ms, doubled). */
const FIRST_WATCH_RETRY_MS = 500;
const LAST_WATCH_RETRY_MS = 30_000;

export class Coordinator {
  private holding = false;
  private stopped = false;
  private lease: Subscription | undefined;
  private poisonWatch: Subscription | undefined;
  private poisonRetry: ReturnType<typeof setTimeout> | undefined;
  private poisonRetryMs = FIRST_WATCH_RETRY_MS;
  private readonly poison = new Map<string, PoisonedItem>();
  private writing = false;
  private dirty = false;
  /** Conditional writes refused in a row (another writer, or the container made again). */
  private conflicts = 0;
  /** What this coordinator last wrote: the node's version after it, and the owners it gave. */
  private written: { version: number; data: Buffer; owners: Map<string, string> } | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    private readonly inputs: CoordinatorInputs,
    private readonly failed: (error: unknown) => void,
    /** A problem the coordinator goes on through (it tries again). */
    private readonly problem: (error: PartitionProblemError) => void,
    /** The problems of `task` are over. */
    private readonly resolved: (task: PartitionTask) => void,
  ) {}

  /** True while this member holds the coordinator's mutex. */
  get isCoordinator(): boolean {
    return this.holding;
  }

  start(): void {
    this.queue();
  }

  /** An input changed: compute again (if this member coordinates). */
  changed(): void {
    if (this.holding && !this.stopped) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.holding = false;
    this.lease?.unsubscribe();
    this.lease = undefined;
    this.unwatchPoison();
  }

  private unwatchPoison(): void {
    clearTimeout(this.poisonRetry);
    this.poisonRetry = undefined;
    this.poisonWatch?.unsubscribe();
    this.poisonWatch = undefined;
  }

  /** Queues on the coordinator's mutex (again after a loss), until stopped. */
  private queue(): void {
    if (this.stopped) return;
    // Queue again once connected: through any number of ConnectTimeouts (ZooKeeper may come up
    // long after the members: a whole stack starting at once), until stopped or closed.
    const again = () => {
      this.lease = undefined;
      if (this.stopped || this.client.isClosed) return;
      this.client.connected().then(
        () => this.queue(),
        (error: unknown) => {
          if (isZkError(error, ZkErrorCode.ConnectTimeout)) again();
        },
      );
    };
    // The role is advice: it is kept through a suspended connection (nothing to make safe).
    this.lease = mutex(this.client, coordinatorPath(this.path), {
      data: this.id,
      onSuspended: 'continue',
      reentrant: false,
    }).subscribe({
      next: () => {
        // A new term: what we wrote in an earlier one may be gone (the container made again).
        this.written = undefined;
        this.conflicts = 0;
        this.holding = true;
        this.watchPoison();
        this.schedule();
      },
      error: (error: unknown) => {
        this.holding = false;
        this.unwatchPoison();
        if (this.stopped || this.client.isClosed) return;
        if (
          LockLostError.isInstance(error) ||
          (isZkError(error) &&
            (error.isRetryable ||
              error.code === ZkErrorCode.SessionExpired ||
              error.code === ZkErrorCode.ConnectTimeout))
        ) {
          again();
          return;
        }
        if (isZkError(error, ZkErrorCode.ClientClosed)) return;
        this.failed(error);
      },
      complete: () => {
        this.holding = false;
      },
    });
  }

  /**
   * The poison reports, while coordinating: a children watch, and a read of each new one. A
   * watch that fails (NoAuth on `<path>/poison`, say) is a problem, and set again after 0.5 s,
   * 1 s, ... up to 30 s, for as long as this member coordinates.
   */
  private watchPoison(): void {
    if (this.poisonWatch || this.poisonRetry) return;
    const where = poisonPath(this.path);
    this.poison.clear();
    let failed = false;
    const watch = this.client.watchChildren(where).subscribe({
      next: (names) => {
        this.poisonRetryMs = FIRST_WATCH_RETRY_MS;
        this.resolved('watch-poison');
        const listed = new Set(names);
        let changed = false;
        for (const item of this.poison.keys()) {
          if (listed.has(item)) continue;
          this.poison.delete(item);
          changed = true;
        }
        for (const item of names) {
          if (this.poison.has(item)) continue;
          this.client.promises.get(joinPath(where, item)).then((node) => {
            const report = decodePoisonReport(node.data);
            if (!report || this.poison.has(item) || !this.holding) return;
            this.poison.set(item, report);
            this.changed();
          }, ignore);
        }
        if (changed) this.changed();
      },
      error: (error: unknown) => {
        failed = true;
        this.poisonWatch = undefined;
        if (!this.holding || this.stopped || isZkError(error, ZkErrorCode.ClientClosed)) return;
        this.problem(
          new PartitionProblemError(this.path, 'watch-poison', undefined, { cause: error }),
        );
        this.poisonRetry = setTimeout(() => {
          this.poisonRetry = undefined;
          if (this.holding && !this.stopped) this.watchPoison();
        }, this.poisonRetryMs);
        this.poisonRetry.unref?.();
        this.poisonRetryMs = Math.min(LAST_WATCH_RETRY_MS, this.poisonRetryMs * 2);
      },
    });
    if (!failed) this.poisonWatch = watch;
  }

  private schedule(): void {
    if (this.writing) {
      this.dirty = true;
      return;
    }
    this.writing = true;
    // After the turn: the inputs of one reply (a listing, a read) come in together.
    setImmediate(() => void this.writeAll());
  }

  private async writeAll(): Promise<void> {
    try {
      do {
        this.dirty = false;
        if (!this.holding || this.stopped) return;
        await this.writeOnce();
      } while (this.dirty);
    } finally {
      this.writing = false;
    }
  }

  /** Computes the assignment; writes it if it differs from what the node holds. */
  private async writeOnce(): Promise<void> {
    const members = this.inputs.members();
    const items = this.inputs.items();
    const watched = this.inputs.assignmentNode();
    if (!members || !items || !watched) return;
    // What the node holds now, as far as we know: our own last write, or the watch's later read.
    const own = this.written;
    const mine = own !== undefined && own.version >= watched.version;
    const node = mine ? own : watched;
    const previous = mine ? own.owners : this.inputs.previousOwners();
    const eligible =
      this.poison.size === 0 ? items.items : items.items.filter((item) => !this.poison.has(item));
    const ids = members.map((member) => member.id);
    const owners = assign({ members: ids, items: eligible, owners: previous });
    const data = encodeAssignment({
      members: ids,
      coordinator: this.id,
      items: items.items,
      digest: items.digest,
      targets: owners,
      poison: this.poison,
    });
    if (data.equals(node.data)) return;
    if (data.length > MAX_ASSIGNMENT_BYTES) {
      this.failed(
        new ZkError(
          ZkErrorCode.BadArguments,
          `partition ${this.path}: the assignment of ${items.items.length} items over ${ids.length} members is ${data.length} bytes, more than a znode takes (${MAX_ASSIGNMENT_BYTES}): use shorter member ids or fewer members`,
        ),
      );
      return;
    }
    let stat: Stat;
    try {
      stat = await this.client.promises.set(membersPath(this.path), data, node.version);
    } catch (error) {
      if (this.stopped) return;
      // Written meanwhile (a coordinator before us), or the container made again (its version
      // back to 0): compute again from what the watch read (our own write is no longer the
      // latest). The watch's read of the change comes a round trip after it at most.
      if (isZkError(error, ZkErrorCode.BadVersion, ZkErrorCode.NoNode)) {
        this.written = undefined;
        // A few times at once; then the watch's next read brings the next attempt.
        this.conflicts += 1;
        if (this.conflicts <= 3) this.dirty = true;
        return;
      }
      if (isZkError(error) && (error.isRetryable || error.code === ZkErrorCode.SessionExpired)) {
        await this.client.connected().catch(ignore);
        this.dirty = true;
        return;
      }
      if (isZkError(error, ZkErrorCode.ClientClosed)) return;
      this.failed(error);
      return;
    }
    this.written = { version: stat.version, data, owners };
    this.conflicts = 0;
  }
}
