/**
 * Leases: what a caller holds — one per acquisition, re-entrant ones sharing the hold of one node
 * (`Hold`) — with its state, loss and revocation streams, signal, release and guarded writes.
 */
import type { TransactionOp, TransactionResult } from '@zkrx/core';
import {
  BehaviorSubject,
  filter,
  map,
  Observable,
  type Observer,
  type Subscription,
  take,
} from 'rxjs';
import type { LockLostError, LockRevokedError } from './errors';
import { guardedWrite } from './guarded-write';
import { type Hold, LazySignal, type LeaseState, releasedReason, runHolding } from './hold';

/**
 * A held lock. Release it when done (or `await using lease = ...`); watch `lost$` or `signal`
 * to stop work the moment ownership is lost.
 *
 * A session's end is heard in any case. The node's deletion by someone else (an operator, a
 * tool) is heard once someone listens — `state$` or `lost$` subscribed, `signal` read, the
 * observable forms — and the hold is 100 ms old (`WATCH_NODE_AFTER_MS`): listening watches the
 * node from then on (two server packets), and the watch's first read reports a deletion that
 * came before. A hold released sooner, or nobody listening, costs the server what Curator's lock
 * does; nobody listening, the lease learns of a deletion at its next `guard`. A revocable lease
 * watches its node from the start.
 */
export interface Lease {
  /** The lock path. */
  readonly path: string;
  /** The lock node this lease holds (shared by re-entrant leases). */
  readonly node: string;
  /**
   * Strictly increases across successive holders of one lock path (the lock node's czxid):
   * hand it to the store you write to, and have the store refuse writes carrying an older
   * token than one it has seen.
   */
  readonly fencingToken: number;
  /** The session holding the node (hex). */
  readonly sessionId: string;
  /** The current state, as far as the lease has heard (see above: who hears a deletion). */
  readonly state: LeaseState;
  /** True while `held` or `suspended`. */
  readonly isHeld: boolean;
  /**
   * Emits the state now and on every change; completes when the lease ends. Subscribing
   * listens for the end: the node is watched for deletion once the hold is 100 ms old.
   */
  readonly state$: Observable<LeaseState>;
  /**
   * Emits the LockLostError once if ownership is lost, then completes (also on release).
   * Subscribing listens for the end: the node is watched for deletion once the hold is 100 ms old.
   */
  readonly lost$: Observable<LockLostError>;
  /**
   * Aborts when the lease ends (with the LockLostError when lost, LeaseReleasedError on
   * release) or, for a revocable lease, when its holder is asked to release it
   * (LockRevokedError): stop the work it guards. Reading it listens for the end: the node is
   * watched for deletion once the hold is 100 ms old.
   */
  readonly signal: AbortSignal;
  /**
   * Revocable leases (`revocable: true`): emits the LockRevokedError once someone asks the
   * holder to release (`requestRevoke`, or Curator's `Revoker`), even before it subscribed; the
   * lease stays held until released. Completes when the lease ends.
   */
  readonly revoked$: Observable<LockRevokedError>;
  /**
   * Releases the lock (or counts down a re-entrant hold). Idempotent. The lease is over at once
   * (`state` `released`, `signal` aborted) and the node's removal is sent right away, before
   * anything this client sends next; the promise resolves once the node is gone — the server
   * removed it, so a read by any session from then on sees it gone — or its session is (while
   * the connection is down: once the servers have not heard from it for a whole session
   * timeout). The next waiter's turn never waits for this promise: it is told when the node goes.
   * Not awaited (`void lease.release()`), what this client sends next still goes out behind the
   * delete. A re-entrant count-down resolves at once (the node stays for the outer lease). The
   * removal is retried across disconnections while the session lives; `client.close()` waits
   * for it. Never rejects.
   */
  release(): Promise<void>;
  /** Runs `fn` in an async context holding this lease: re-acquiring the lock inside re-enters it. */
  run<T>(fn: () => T): T;
  /**
   * A guarded write: applies `ops` in one ZooKeeper transaction behind a `check` of this lease's
   * node, so they land only if the lock is still held when ZooKeeper applies them — even if this
   * client has not heard yet that it lost it. Resolves the ops' results.
   *
   * Rejects with LockLostError when the lock was lost (nothing written; at once, without a round
   * trip, when the lease knows already), LeaseReleasedError after `release()`, the ZkError of the
   * failing op (`code`, `opIndex` in `ops`; nothing written), or ZkError `BadArguments` for bad
   * ops (not an array, not `op.*` results, a `set`/`delete` of the lease's own node). While
   * `suspended` it waits for the connection (or the loss) before sending. A LockLostError whose
   * `cause` is a ZkError `ConnectionLoss` means the transaction was in flight when the connection
   * dropped: it may have been applied — while the lock was held, never after.
   *
   * ## Example
   * ```ts
   * const [written] = await lease.guard([op.set('/orders/42/state', 'shipped')]);
   * console.log(written.type);
   * // Output: set
   * ```
   *
   * @param ops The writes (`op.create`, `op.set`, `op.delete`, `op.check` from @zkrx/core).
   * @return One result per op, as `client.promises.multi` gives them.
   */
  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * What `release()` answers while the release is starting: a listener of the lease's state or
 * signal that releases it again meanwhile is told it is released (its node's removal is sent
 * right after).
 */
const settledSoon = Promise.resolve();

/** Adds one lease on `hold`'s hold: each acquisition, re-entrant or not, gets its own. */
export function retainLease(hold: Hold): Lease {
  hold.addHolder();
  return new LeaseHandle(hold);
}

/** The leases made here (a multi-lock guards its leases' holds in one transaction). */
const handles = new WeakMap<Lease, LeaseHandle>();

/**
 * A guarded write over several leases of one client (a multi-lock): one transaction with a check
 * of every lease's node, then `ops`. See {@link Lease.guard}.
 */
export function guardLeases(
  leases: readonly Lease[],
  ops: readonly TransactionOp[],
  what: string,
): Promise<TransactionResult[]> {
  const found = leases.map((lease) => handles.get(lease) as LeaseHandle);
  return guardedWrite(
    found.map((handle) => handle.hold),
    ops,
    what,
    found.some((handle) => handle.state === 'released'),
  );
}

/**
 * The lease's loss as far as it hears of it, without starting its node's watch: for a recipe's
 * own bookkeeping (a multi-lock acquiring its later locks), which must not make the caller pay for
 * a watch nobody asked for.
 */
export function lossHeard(lease: Lease): Observable<LockLostError> {
  const hold = (handles.get(lease) as LeaseHandle).hold;
  return hold.state$.pipe(
    filter((state) => state === 'lost'),
    take(1),
    map(() => hold.lostError as LockLostError),
  );
}

/**
 * Subscribes `observer` to a lease's state, as `lease.state$` does (listening for the end), with
 * no stream made around it: for the observable forms, which watch every lease they emit.
 */
export function watchLeaseState(
  lease: Lease,
  observer: Partial<Observer<LeaseState>>,
): Subscription {
  return (handles.get(lease) as LeaseHandle).watchState(observer);
}

/**
 * `source()`, subscribed: listening for the end arms the node's watch once the hold is old enough
 * (`Hold.listen`), after the subscriber is in place, so that a loss the watch's first read
 * reports (a node deleted before) reaches it too.
 */
function watchingNode<T>(hold: Hold, source: () => Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const subscription = source().subscribe(subscriber);
    hold.listen();
    return subscription;
  });
}

/** One lease on a Hold (re-entrant acquisitions each get their own). */
class LeaseHandle implements Lease {
  /** What `release()` resolves, once called (see {@link Lease.release}). */
  private releasing: Promise<void> | undefined;
  private readonly own: BehaviorSubject<LeaseState>;
  private readonly mirror: Subscription;
  private readonly controller = new LazySignal();
  private readonly revocation: Subscription | undefined;
  /** `lost$` and `revoked$`, made when first read (most leases are never asked for them). */
  private lost: Observable<LockLostError> | undefined;
  private revoked: Observable<LockRevokedError> | undefined;

  constructor(readonly hold: Hold) {
    handles.set(this, this);
    this.own = new BehaviorSubject<LeaseState>(hold.state$.value);
    // Only a revocable hold is ever told of a revocation request.
    if (hold.revocable) {
      this.revocation = this.revoked$.subscribe((revoked) => {
        if (!this.releasing) this.controller.abort(revoked);
      });
    }
    this.mirror = hold.state$.subscribe({
      next: (state) => {
        if (!this.releasing) this.own.next(state);
      },
      complete: () => this.finish(() => hold.lostError ?? releasedReason(hold.path)),
    });
  }

  get lost$(): Observable<LockLostError> {
    const hold = this.hold;
    this.lost ??= watchingNode(hold, () =>
      this.own.pipe(
        filter((state) => state === 'lost'),
        take(1),
        map(() => hold.lostError as LockLostError),
      ),
    );
    return this.lost;
  }

  get revoked$(): Observable<LockRevokedError> {
    this.revoked ??= this.hold.revoked$.pipe(
      filter((revoked): revoked is LockRevokedError => revoked !== undefined),
      take(1),
    );
    return this.revoked;
  }

  get path(): string {
    return this.hold.path;
  }
  get node(): string {
    return this.hold.node;
  }
  get fencingToken(): number {
    return this.hold.fencingToken;
  }
  get sessionId(): string {
    return this.hold.sessionId;
  }
  get state(): LeaseState {
    return this.own.value;
  }
  get isHeld(): boolean {
    const state = this.own.value;
    return state === 'held' || state === 'suspended';
  }
  get state$(): Observable<LeaseState> {
    return watchingNode(this.hold, () => this.own);
  }
  get signal(): AbortSignal {
    this.hold.listen();
    return this.controller.signal;
  }

  release(): Promise<void> {
    if (this.releasing) return this.releasing;
    const wasHeld = this.isHeld;
    // Set before the state changes: what listens to it sees this lease released.
    this.releasing = settledSoon;
    if (wasHeld) {
      this.own.next('released');
      this.finish(() => releasedReason(this.hold.path));
    }
    this.releasing = this.hold.releaseOne();
    return this.releasing;
  }

  /** See {@link watchLeaseState}: subscribed before listening, as `watchingNode` does. */
  watchState(observer: Partial<Observer<LeaseState>>): Subscription {
    const subscription = this.own.subscribe(observer);
    this.hold.listen();
    return subscription;
  }

  run<T>(fn: () => T): T {
    return runHolding(this.hold, fn);
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    // Released while held: over, though its hold may live on for a re-entrant sibling. (Released
    // after a loss, it stays `lost`: the guard says why.)
    return guardedWrite([this.hold], ops, `guard of ${this.hold.path}`, this.state === 'released');
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  private finish(reason: () => Error): void {
    this.mirror?.unsubscribe();
    this.revocation?.unsubscribe();
    this.controller.abortWith(reason);
    this.own.complete();
  }
}
