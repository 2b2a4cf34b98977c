/**
 * Leases: a held lock node watched for loss (session expiry, suspension, deletion), with a
 * fencing token, an AbortSignal, and a release that leaves no node behind on any path.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TransactionOp, TransactionResult, ZkClient } from '@zkrx/core';
import { BehaviorSubject, filter, map, Observable, type Subscription, take } from 'rxjs';
import { LeaseReleasedError, LockLostError, type LockLostReason, LockRevokedError } from './errors';
import { guardedWrite } from './guard';
import type { QueueHold } from './lock-queue';
import { removeOwnNode } from './lock-queue';
import { type HoldRecord, holdStarted, type LockLabels } from './telemetry';

/** What a lease does while the connection is suspended (ownership uncertain). */
export type SuspendedPolicy = 'release' | 'continue';

/** The life of a lease: `held`, maybe `suspended` (policy `continue`), then `lost` or `released`. */
export type LeaseState = 'held' | 'suspended' | 'lost' | 'released';

/**
 * A held lock. Release it when done (or `await using lease = ...`); watch `lost$` or `signal`
 * to stop work the moment ownership is lost.
 *
 * A session's end is heard in any case. The node's deletion by someone else (an operator, a
 * tool) is heard once someone listens — `state$` or `lost$` subscribed, `signal` read, the
 * observable forms, a revocable lease: listening watches the node (two server packets), and its
 * first read reports a deletion that came before. Nobody listening, the lease learns it at its
 * next `guard`, and costs the server what Curator's lock does.
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
   * watches the node for deletion.
   */
  readonly state$: Observable<LeaseState>;
  /**
   * Emits the LockLostError once if ownership is lost, then completes (also on release).
   * Subscribing watches the node for deletion.
   */
  readonly lost$: Observable<LockLostError>;
  /**
   * Aborts when the lease ends (with the LockLostError when lost, LeaseReleasedError on
   * release) or, for a revocable lease, when its holder is asked to release it
   * (LockRevokedError): stop the work it guards. Reading it watches the node for deletion.
   */
  readonly signal: AbortSignal;
  /**
   * Revocable leases (`revocable: true`): emits the LockRevokedError once someone asks the
   * holder to release (`requestRevoke`, or Curator's `Revoker`), even before it subscribed; the
   * lease stays held until released. Completes when the lease ends.
   */
  readonly revoked$: Observable<LockRevokedError>;
  /**
   * Releases the lock (or counts down a re-entrant hold). Idempotent. Resolves at once: the
   * lease is over here, and the node's removal is sent right away (before anything this client
   * sends next) and finished in the background, retried across disconnections while the session
   * lives; `client.close()` waits for it. Another client may see the node for one round trip.
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

export interface LeaseCoreOptions {
  readonly client: ZkClient;
  readonly path: string;
  /** What the reentrancy context keys this hold by (the recipe and its side, e.g. `write`). */
  readonly recipe: string;
  readonly onSuspended: SuspendedPolicy;
  /** Act on revocation requests (the node's data set to `__REVOKE__`, Curator's protocol). */
  readonly revocable?: boolean;
  /** The lock's name in telemetry (`LockOptions.name`): then its path is an attribute too. */
  readonly name?: string | undefined;
}

/** What a revocation request writes into the lock node (Curator's `Revoker`). */
export const REVOKE_MESSAGE = '__REVOKE__';

/** A release is no failure: its reason needs no stack trace (which costs more than the rest). */
function releasedReason(path: string): LeaseReleasedError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new LeaseReleasedError(path);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * An AbortSignal made only when someone asks for it (most leases are never asked), aborted with
 * the lease's end reason whenever that comes.
 */
class LazySignal {
  private controller: AbortController | undefined;
  /** The end reason, or what makes it: made only if the signal is asked for (most never are). */
  private reason: (() => unknown) | undefined;
  private ended = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.reasonNow());
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.abortWith(() => reason);
  }

  /** Ends with the reason `make` gives, called only if someone has or asks for the signal. */
  abortWith(make: () => unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.reason = make;
    this.controller?.abort(this.reasonNow());
  }

  private reasonNow(): unknown {
    const made = (this.reason as () => unknown)();
    this.reason = () => made;
    return made;
  }
}

// ---- re-entrancy by async context ----

type HoldMap = ReadonlyMap<string, LeaseCore>;
const storage = new AsyncLocalStorage<HoldMap>();
const clientIds = new WeakMap<ZkClient, number>();
let nextClientId = 1;

function holdKey(client: ZkClient, recipe: string, path: string): string {
  let id = clientIds.get(client);
  if (id === undefined) {
    id = nextClientId++;
    clientIds.set(client, id);
  }
  return `${id}\u0000${recipe}\u0000${path}`;
}

/** The live hold of this client on `path` (by `recipe`) in the current async context, if any. */
export function heldInContext(
  client: ZkClient,
  recipe: string,
  path: string,
): LeaseCore | undefined {
  const core = storage.getStore()?.get(holdKey(client, recipe, path));
  return core?.isHeld ? core : undefined;
}

/** Runs `fn` in the current context plus `core`'s hold. */
export function runHolding<T>(core: LeaseCore, fn: () => T): T {
  const next = new Map(storage.getStore());
  next.set(core.key, core);
  return storage.run(next, fn);
}

// ---- the shared hold of one node ----

/**
 * One lock node held: tracks the session for loss and owns the node's removal. Re-entrant
 * leases share it and count down; the node goes when the last one is released.
 */
export class LeaseCore {
  readonly key: string;
  readonly client: ZkClient;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: number;
  readonly sessionId: string;
  readonly state$: BehaviorSubject<LeaseState>;
  readonly controller = new LazySignal();
  lostError: LockLostError | undefined;
  /** Set once a revocation was requested (revocable leases only). */
  readonly revoked$ = new BehaviorSubject<LockRevokedError | undefined>(undefined);
  private holders = 0;
  /** Whether revocation requests are heard (`revocable: true`). */
  readonly revocable: boolean;
  private readonly onSuspended: SuspendedPolicy;
  private readonly sessionSubscription: Subscription;
  private nodeSubscription: Subscription | undefined;
  private removal: Promise<void> | undefined;
  /** Ends a `continue` lease suspended for a whole session timeout. */
  private suspendTimer: ReturnType<typeof setTimeout> | undefined;
  /** The lock as telemetry names it (the guard's span uses it too). */
  readonly labels: LockLabels;
  private readonly holdRecord: HoldRecord;

  constructor(options: LeaseCoreOptions, hold: QueueHold) {
    this.client = options.client;
    this.path = options.path;
    this.labels = { kind: options.recipe, path: options.path, name: options.name };
    // Started before the session is watched: a session already gone ends the hold at once.
    this.holdRecord = holdStarted(this.labels);
    this.key = holdKey(options.client, options.recipe, options.path);
    this.node = hold.node;
    this.fencingToken = hold.stat.czxid;
    this.sessionId = hold.sessionId;
    this.onSuspended = options.onSuspended;
    this.revocable = options.revocable === true;
    this.state$ = new BehaviorSubject<LeaseState>('held');
    this.sessionSubscription = this.client.session$.subscribe({
      next: ({ state, sessionId }) => {
        if (state === 'closed' || state === 'auth-failed') return this.end('released');
        if (state === 'expired' || (sessionId !== undefined && sessionId !== this.sessionId)) {
          return this.lose('session-expired');
        }
        if (state === 'connecting') return this.lose('session-expired');
        if (state === 'suspended') {
          if (this.onSuspended === 'continue') return this.suspend();
          return this.lose('suspended');
        }
        if (state === 'reconnected' && this.state$.value === 'suspended')
          this.confirmAfterReconnect();
      },
      complete: () => this.end('released'),
    });
    // The session was already gone when the hold was made: the subscription ended it at once.
    if (!this.isHeld) {
      this.sessionSubscription.unsubscribe();
      hold.nodeWatch?.unsubscribe();
      return;
    }
    // Watched from the start when the queue watched our node (taken over here: subscribed
    // before the queue's subscription goes, the client keeps its one ZooKeeper watch), or when
    // revocation requests are to be heard; otherwise once someone listens (see `watchNode`).
    if (hold.nodeWatch || this.revocable) this.watchNode();
    hold.nodeWatch?.unsubscribe();
  }

  /**
   * Watches our node, once, from now until the hold ends: its deletion (by an operator, a tool)
   * ends the hold (`node-deleted`), and a revocable lease hears revocation requests (the node's
   * data set to `__REVOKE__`) on the same watch. Called when someone listens for the lease's end
   * (`state$`, `lost$`, `signal`, the observable forms), for a revocable lease, or when the queue
   * watched the node already: the watch costs the server two packets (its read, its notification
   * when the node goes), which only those who listen pay.
   *
   * Armed late, it misses nothing: its first read shows the node as it is now, so a node deleted
   * before is reported at once (`null`: a name holding a UUID is never made again), and a
   * revocation request made before is read in the data.
   */
  watchNode(): void {
    if (this.nodeSubscription || !this.isHeld) return;
    this.nodeSubscription = this.client.watchData(this.node).subscribe({
      next: (value) => {
        if (value === null || value.stat.ephemeralOwner !== this.sessionId) {
          return this.lose('node-deleted');
        }
        if (this.revocable && value.data.toString('utf8') === REVOKE_MESSAGE) this.revoke();
      },
      error: () => {
        // The stream failed (client closed): the session events decide.
      },
    });
    // Lost synchronously (a cached `null`): the subscription was made after `finish` ran.
    if (!this.isHeld) this.nodeSubscription.unsubscribe();
  }

  /** The hold's AbortSignal (see `LazySignal`); asking for it starts the node's watch. */
  get signal(): AbortSignal {
    this.watchNode();
    return this.controller.signal;
  }

  get isHeld(): boolean {
    const state = this.state$.value;
    return state === 'held' || state === 'suspended';
  }

  /** Adds one lease on this hold. */
  retain(): Lease {
    this.holders += 1;
    return new LeaseHandle(this);
  }

  /** One lease on this hold was released: the last one ends the hold (the removal goes on in the background). */
  releaseOne(): void {
    this.holders -= 1;
    if (this.holders > 0) return;
    void this.releaseNode().catch(() => {});
  }

  /** Removes the node (whatever the holders count): release, or clean-up after a loss. */
  releaseNode(): Promise<void> {
    if (this.isHeld) this.end('released');
    return this.removeNode();
  }

  /** A revocation was requested: tell the holder (once); the lease stays held. */
  private revoke(): void {
    if (!this.isHeld || this.revoked$.value) return;
    const revoked = new LockRevokedError(this.path, this.node);
    this.revoked$.next(revoked);
    this.controller.abort(revoked);
  }

  lose(reason: LockLostReason): void {
    if (!this.isHeld) return;
    this.lostError = new LockLostError(this.path, reason);
    this.holdRecord('lost', reason);
    this.setState('lost');
    const lost = this.lostError;
    this.finish(() => lost);
    // While the session may live on (suspended, or the node went), remove what is ours.
    if (reason !== 'session-expired') void this.removeNode().catch(() => {});
  }

  private end(state: 'released'): void {
    if (!this.isHeld) return;
    this.holdRecord(this.revoked$.value ? 'revoked' : state);
    this.setState(state);
    this.finish(() => releasedReason(this.path));
  }

  /** `reason`: what the signal aborts with, made only if someone has or asks for the signal. */
  private finish(reason: () => Error): void {
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    this.sessionSubscription?.unsubscribe();
    this.nodeSubscription?.unsubscribe();
    this.revoked$.complete();
    this.controller.abortWith(reason);
    this.state$.complete();
  }

  private setState(state: LeaseState): void {
    if (this.state$.value !== state && !this.state$.closed) this.state$.next(state);
  }

  /**
   * Suspended under the policy `continue`: held on while the session may live, for one session
   * timeout at most. The client keeps a suspended session until the server says it expired (a
   * quorum loss restarts the servers' clocks, so a session can outlive a long cut); past a
   * whole timeout without a connection, the server has likely expired it, so the lease is lost
   * as Curator's LOST does — the safe side of not knowing.
   */
  private suspend(): void {
    if (this.state$.value === 'suspended') return;
    this.setState('suspended');
    clearTimeout(this.suspendTimer);
    this.suspendTimer = setTimeout(() => {
      this.suspendTimer = undefined;
      if (this.state$.value === 'suspended') this.lose('suspended');
    }, this.client.sessionTimeoutMs);
  }

  /** Back from `suspended` (policy `continue`): the node must still be there and ours. */
  private confirmAfterReconnect(): void {
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    this.client.promises.exists(this.node).then(
      (stat) => {
        if (!stat || stat.ephemeralOwner !== this.sessionId) this.lose('node-deleted');
        else if (this.state$.value === 'suspended') this.setState('held');
      },
      () => {
        // Could not check: the next session event decides.
      },
    );
  }

  private removeNode(): Promise<void> {
    if (!this.removal) {
      this.removal = removeOwnNode(this.client, this.node, this.sessionId);
    }
    return this.removal;
  }
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
    found.map((handle) => handle.core),
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
export function lossHeard$(lease: Lease): Observable<LockLostError> {
  const core = (handles.get(lease) as LeaseHandle).core;
  return core.state$.pipe(
    filter((state) => state === 'lost'),
    take(1),
    map(() => core.lostError as LockLostError),
  );
}

/**
 * `source()`, subscribed: listening for the end starts the node's watch (`LeaseCore.watchNode`),
 * armed once the subscriber is in place, so that a loss the watch's first read reports (a node
 * deleted before) reaches it too.
 */
function watchingNode<T>(core: LeaseCore, source: () => Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const subscription = source().subscribe(subscriber);
    core.watchNode();
    return subscription;
  });
}

/** One lease on a LeaseCore (re-entrant acquisitions each get their own). */
class LeaseHandle implements Lease {
  private released = false;
  private readonly own: BehaviorSubject<LeaseState>;
  private readonly mirror: Subscription;
  private readonly controller = new LazySignal();
  private readonly revocation: Subscription | undefined;
  readonly lost$: Observable<LockLostError>;
  readonly revoked$: Observable<LockRevokedError>;

  constructor(readonly core: LeaseCore) {
    handles.set(this, this);
    this.own = new BehaviorSubject<LeaseState>(core.state$.value);
    this.revoked$ = core.revoked$.pipe(
      filter((revoked): revoked is LockRevokedError => revoked !== undefined),
      take(1),
    );
    // Only a revocable hold is ever told of a revocation request.
    if (core.revocable) {
      this.revocation = this.revoked$.subscribe((revoked) => {
        if (!this.released) this.controller.abort(revoked);
      });
    }
    this.mirror = core.state$.subscribe({
      next: (state) => {
        if (!this.released) this.own.next(state);
      },
      complete: () => this.finish(() => core.lostError ?? releasedReason(core.path)),
    });
    this.lost$ = watchingNode(core, () =>
      this.own.pipe(
        filter((state) => state === 'lost'),
        take(1),
        map(() => core.lostError as LockLostError),
      ),
    );
  }

  get path(): string {
    return this.core.path;
  }
  get node(): string {
    return this.core.node;
  }
  get fencingToken(): number {
    return this.core.fencingToken;
  }
  get sessionId(): string {
    return this.core.sessionId;
  }
  get state(): LeaseState {
    return this.own.value;
  }
  get isHeld(): boolean {
    const state = this.own.value;
    return state === 'held' || state === 'suspended';
  }
  get state$(): Observable<LeaseState> {
    return watchingNode(this.core, () => this.own);
  }
  get signal(): AbortSignal {
    this.core.watchNode();
    return this.controller.signal;
  }

  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    const wasHeld = this.isHeld;
    this.released = true;
    if (wasHeld) {
      this.own.next('released');
      this.finish(() => releasedReason(this.core.path));
    }
    this.core.releaseOne();
    return Promise.resolve();
  }

  run<T>(fn: () => T): T {
    return runHolding(this.core, fn);
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    // Released while held: over, though its hold may live on for a re-entrant sibling. (Released
    // after a loss, it stays `lost`: the guard says why.)
    return guardedWrite([this.core], ops, `guard of ${this.core.path}`, this.state === 'released');
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
