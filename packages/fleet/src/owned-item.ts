/**
 * An item a member of a partition owns: its lock's lease, a signal of its own that aborts when
 * the item is given up or lost, and the runs the release waits for.
 */
import type { TransactionOp, TransactionResult } from '@zkrx/core';
import type { Lease } from '@zkrx/lock';
import { LeaseRuns } from '@zkrx/lock/recipe';
import type { OwnershipEndedError } from './errors';

/** An item this member owns: its lock is held. */
export interface OwnedItem {
  /** The item. */
  readonly item: string;
  /** The item's lock path: `<path>/items/<item>`. */
  readonly path: string;
  /** The lock node held (its full path). */
  readonly node: string;
  /**
   * Strictly increases from owner to owner of this item (the lock node's czxid): hand it to the
   * store you write to, and have it refuse writes with an older token than one it has seen.
   */
  readonly fencingToken: number;
  /**
   * Aborts when this member stops owning the item, with an `OwnershipEndedError` saying why
   * (`moved`, `removed`, `left`, `closed`, or a lost lock): stop the work on it.
   */
  readonly signal: AbortSignal;
  /** True until `signal` aborts. */
  readonly isOwned: boolean;
  /**
   * Keeps `run` in view: when the item is given up (moved, removed, unsubscribed), its lock is
   * released only once `run` settled — the next owner never starts while it still runs — or
   * once the partition's `releaseTimeoutMs` passed. (A lock that is lost cannot wait: `signal`
   * tells the run.) Returns `run`. Throws the signal's reason (`OwnershipEndedError`) once the
   * item is no longer owned: a run started then would run beside the next owner.
   */
  track<T extends PromiseLike<unknown>>(run: T): T;
  /**
   * Runs `work(signal)` if the item is still owned, in an async context holding its lock, and
   * tracks a promise it returns; returns its result, or `undefined` without running it.
   */
  runIfOwned<T>(work: (signal: AbortSignal) => T): T | undefined;
  /**
   * A guarded write: `ops` in one ZooKeeper transaction behind a `check` of the item's lock
   * node — they land only while the lock is held (see @zkrx/lock's `lease.guard`). Rejects at
   * once with the `signal`'s reason once the item is no longer owned.
   */
  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
}

/** An owned item: the lease of its lock, a signal of its own, and the runs to wait for. */
export class OwnedItemHandle implements OwnedItem {
  private readonly controller = new AbortController();
  private readonly runs = new LeaseRuns();

  constructor(
    readonly item: string,
    readonly path: string,
    private readonly lease: Lease,
  ) {}

  get node(): string {
    return this.lease.node;
  }
  get fencingToken(): number {
    return this.lease.fencingToken;
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get isOwned(): boolean {
    return !this.controller.signal.aborted;
  }

  end(reason: OwnershipEndedError): void {
    this.controller.abort(reason);
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    if (!this.isOwned) throw this.signal.reason;
    return this.runs.track(run);
  }

  runIfOwned<T>(work: (signal: AbortSignal) => T): T | undefined {
    return this.isOwned ? this.runs.runUnder(this.lease, this.signal, work) : undefined;
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    if (!this.isOwned) return Promise.reject(this.signal.reason);
    return this.lease.guard(ops);
  }

  /** True while a tracked run has not settled. */
  get running(): boolean {
    return this.runs.busy;
  }

  /** Resolves once every tracked run settled, runs tracked meanwhile included. */
  settled(): Promise<void> {
    return this.runs.settled();
  }
}
