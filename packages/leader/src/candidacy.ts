/**
 * A candidacy in a latch-style election (Curator LeaderLatch layout): the one mechanism behind
 * `elect` and `leadership`, and what the adapters build on — a term signal, runs kept in view,
 * and a graceful close that never lets two leaders work at once.
 */
import {
  isZkError,
  type TransactionOp,
  type TransactionResult,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { type Lease, LeaseReleasedError, LockLostError } from '@zkrx/lock';
import { validateGuardOps } from '@zkrx/lock/recipe';
import { BehaviorSubject, distinctUntilChanged, Observable, type Subscription } from 'rxjs';
import { type CandidateOptions, latch, resolveCandidate } from './options';
import { termStarted } from './telemetry';

/** A candidacy joined with `elect`: live state, a signal per term, runs, and `close()` to leave. */
export interface Election {
  /** True while this candidate leads (false from the moment `close()` is called). */
  readonly isLeader: boolean;
  /**
   * The current term's fencing token (its node's czxid, strictly increasing from one leader to
   * the next), or undefined while not leading: hand it to the stores a leader writes to.
   */
  readonly fencingToken: number | undefined;
  /** Replays whether this candidate leads, then every change; completes on close. */
  readonly leadership$: Observable<boolean>;
  /**
   * The current term's signal: aborts when this leadership ends — with the LockLostError of
   * the loss (`reason`: `session-expired`, `suspended`, `node-deleted`) — or when `close()`
   * begins (LeaseReleasedError). Already aborted (ZkError `Aborted`) while not leading.
   */
  readonly signal: AbortSignal;
  /** Resolves the term's signal once this candidate leads; rejects ClientClosed on close. */
  whenLeader(): Promise<AbortSignal>;
  /**
   * Keeps `run` in view: `close()` waits for it to settle before leaving the election, so the
   * next leader never starts while it still runs. Returns `run`.
   */
  track<T extends PromiseLike<unknown>>(run: T): T;
  /**
   * Runs `work` with the term's signal if this candidate leads now, else returns `undefined`
   * without running it. A result that is a promise (or any thenable) is tracked.
   *
   * ## Example
   * ```ts
   * await election.runIfLeader((signal) => sendDailyReport({ signal }));
   * ```
   */
  runIfLeader<T>(work: (signal: AbortSignal) => T): T | undefined;
  /**
   * A leader-only write: applies `ops` in one ZooKeeper transaction behind a `check` of the
   * current term's node, so they land only while this candidate leads — even if it has not heard
   * yet that it lost. Rejects at once, writing nothing, while not leading (with the reason
   * `signal` carries: the LockLostError of the loss, LeaseReleasedError once `close()` began,
   * ZkError `Aborted` before the first term), and otherwise as a lock lease's `guard` does
   * (LockLostError, the failing op's ZkError, `BadArguments`). It guards whichever term is current
   * when called: work that must not outlive its own term checks that term's signal.
   *
   * ## Example
   * ```ts
   * await election.guard([op.set('/config/scheduler', JSON.stringify(plan))]);
   * ```
   */
  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
  /**
   * Leaves the election gracefully: stops leading at once (`isLeader` false, `signal` aborts),
   * waits for the tracked runs to settle, then removes the candidate's node — the next
   * candidate leads within a round trip of that. Idempotent.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Runs kept in view until they settle, including those added meanwhile. */
class Runs {
  private readonly running = new Set<Promise<void>>();

  add(run: PromiseLike<unknown>): void {
    const settled = Promise.resolve(run).then(
      () => {},
      () => {},
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
  }

  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/** One candidate standing in one election until closed; stands again after each loss. */
class Candidacy implements Election {
  private readonly state = new BehaviorSubject(false);
  /** Ends the current term's telemetry (a no-op between terms). */
  private endTerm: () => void = () => {};
  readonly leadership$: Observable<boolean> = this.state.pipe(distinctUntilChanged());
  private term: AbortController;
  private readonly closing = new AbortController();
  /** The current term's signal joined with `closing`'s, made once per term. */
  private termSignal: { readonly term: AbortSignal; readonly signal: AbortSignal } | undefined;
  private readonly runs = new Runs();
  private current: Subscription | undefined;
  private lease: Lease | undefined;
  private closed = false;
  /** Whether the first node was queued (`elect` resolved). */
  private joined = false;
  private closeDone: Promise<void> | undefined;
  /** Why the candidacy ended, when it failed rather than closed. */
  failure: unknown;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly candidate: ReturnType<typeof resolveCandidate>,
    /** Called once, when the candidate's first node is queued. */
    private readonly onJoined: () => void,
    /** Called when the candidacy fails before it ever joined. */
    private readonly onFailedToJoin: (error: unknown) => void,
  ) {
    this.term = new AbortController();
    this.term.abort(new ZkError(ZkErrorCode.Aborted, `election ${path}: not the leader`));
    this.stand();
  }

  get isLeader(): boolean {
    return this.state.value;
  }

  get fencingToken(): number | undefined {
    return this.state.value ? this.lease?.fencingToken : undefined;
  }

  get signal(): AbortSignal {
    if (!this.state.value) return this.term.signal;
    const term = this.term.signal;
    if (this.termSignal?.term !== term) {
      this.termSignal = { term, signal: AbortSignal.any([term, this.closing.signal]) };
    }
    return this.termSignal.signal;
  }

  whenLeader(): Promise<AbortSignal> {
    if (this.state.value) return Promise.resolve(this.signal);
    return new Promise<AbortSignal>((resolve, reject) => {
      const subscription = this.state.subscribe({
        next: (leading) => {
          if (!leading) return;
          queueMicrotask(() => subscription.unsubscribe());
          resolve(this.signal);
        },
        complete: () =>
          reject(new ZkError(ZkErrorCode.ClientClosed, `election ${this.path}: closed`)),
      });
    });
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    this.runs.add(run);
    return run;
  }

  runIfLeader<T>(work: (signal: AbortSignal) => T): T | undefined {
    if (!this.state.value) return undefined;
    const result = work(this.signal);
    if (isThenable(result)) this.track(result);
    return result;
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    const lease = this.state.value ? this.lease : undefined;
    if (lease) return lease.guard(ops);
    try {
      validateGuardOps(ops, [], `guard of election ${this.path}`);
    } catch (error) {
      return Promise.reject(error);
    }
    // Not leading: known without a round trip (the term ended, or none began).
    return Promise.reject(this.term.signal.reason);
  }

  close(): Promise<void> {
    this.closeDone ??= this.shutdown();
    return this.closeDone;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    // Stop leading at once: the runs in flight are asked to finish...
    this.closing.abort(new LeaseReleasedError(this.path));
    this.setLeading(false, new LeaseReleasedError(this.path));
    // ...and the node stays until they have, so nobody else leads meanwhile.
    await this.runs.settled();
    const lease = this.lease;
    this.lease = undefined;
    // Released first: its delete goes out before anything else; the next candidate is told as
    // the node goes.
    const handover = lease?.release();
    this.current?.unsubscribe();
    this.state.complete();
    await handover;
  }

  /** `ended`: why a term ends — the LockLostError of a loss, or LeaseReleasedError on close. */
  private setLeading(leading: boolean, ended?: Error): void {
    if (leading === this.state.value || this.state.closed) return;
    if (leading) {
      this.term = new AbortController();
      this.endTerm = termStarted({
        kind: 'leader-latch',
        path: this.path,
        name: this.candidate.name,
      });
    } else {
      this.term.abort(ended ?? new LeaseReleasedError(this.path));
      this.endTerm();
    }
    this.state.next(leading);
  }

  private stand(): void {
    if (this.closed) return;
    this.current = latch
      .lease$(this.client, this.path, {
        data: this.candidate.id,
        onSuspended: this.candidate.onSuspended,
        reentrant: false,
        name: this.candidate.name,
        onQueued: () => {
          if (this.joined) return;
          this.joined = true;
          this.onJoined();
        },
      })
      .subscribe({
        next: (lease) => {
          if (this.closed) {
            void lease.release();
            return;
          }
          this.lease = lease;
          this.setLeading(true);
        },
        error: (error: unknown) => {
          this.lease = undefined;
          this.setLeading(false, error instanceof Error ? error : undefined);
          // Lost leadership (or the session went while queued): stand again.
          if (LockLostError.isInstance(error) || isZkError(error, ZkErrorCode.SessionExpired)) {
            return this.stand();
          }
          if (!this.joined) this.onFailedToJoin(error);
          if (!isZkError(error, ZkErrorCode.ClientClosed)) this.failure = error;
          void this.close();
        },
        complete: () => {
          // The lease ended without loss: the client closed.
          this.lease = undefined;
          void this.close();
        },
      });
  }
}

/**
 * Stands in the election at `path` (latch style) and resolves once this candidate's node is in
 * the queue. The candidacy lasts until `close()`; after a loss (session expired, suspended
 * under the default policy, node deleted) the candidate stands again by itself.
 *
 * ## Example
 * ```ts
 * await using election = await elect(client, '/election/migrations', { id: 'worker-7' });
 * const signal = await election.whenLeader();
 * await election.track(runMigrations({ signal }));
 * ```
 *
 * @param client The client whose session stands.
 * @param path The election path (Curator LeaderLatch layout, `_c_<uuid>-latch-<seq>` nodes).
 * @param options The participant id and the suspended policy.
 * @return The candidacy, once queued.
 */
export function elect(
  client: ZkClient,
  path: string,
  options?: CandidateOptions,
): Promise<Election> {
  return new Promise<Election>((resolve, reject) => {
    const candidate = resolveCandidate(client, path, options);
    const candidacy: Candidacy = new Candidacy(
      client,
      path,
      candidate,
      () => resolve(candidacy),
      reject,
    );
  });
}

/**
 * This candidate's leadership as an observable: `false` at once, `true` when elected, `false`
 * when leadership is lost (session expired, suspended under the default policy, node deleted),
 * after which the candidate stands again by itself. Unsubscribing leaves the election. Completes
 * when the client closes; errors when the candidacy cannot go on (e.g. LockConflictError). Only
 * a candidate whose node is first AND owned by its current session leads.
 *
 * ## Example
 * ```ts
 * leadership(client, '/election/scheduler', { id: 'worker-7' }).subscribe({
 *   next: (leading) => console.log(leading),
 *   error: (error) => console.error('not standing any more', error),
 * });
 * // Output: false
 * //         true
 * ```
 *
 * @param client The client whose session stands.
 * @param path The election path (Curator LeaderLatch layout, `_c_<uuid>-latch-<seq>` nodes).
 * @param options The participant id and the suspended policy.
 * @return Whether this candidate leads, now and on every change.
 */
export function leadership(
  client: ZkClient,
  path: string,
  options?: CandidateOptions,
): Observable<boolean> {
  return new Observable<boolean>((subscriber) => {
    const candidate = resolveCandidate(client, path, options);
    const candidacy = new Candidacy(
      client,
      path,
      candidate,
      () => {},
      () => {},
    );
    const forward = candidacy.leadership$.subscribe({
      next: (leading) => subscriber.next(leading),
      complete: () => {
        if (candidacy.failure !== undefined) subscriber.error(candidacy.failure);
        else subscriber.complete();
      },
    });
    return () => {
      forward.unsubscribe();
      void candidacy.close();
    };
  });
}
