/**
 * A candidacy: one candidate standing in one election until it leaves — the one mechanism behind
 * `joinElection`, `leadership` and `whileLeader`, and what the adapters are wired to.
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
import { LeaseRuns, validateGuardOps } from '@zkrx/lock/recipe';
import { BehaviorSubject, distinctUntilChanged, Observable, type Subscription } from 'rxjs';
import {
  type CandidateOptions,
  DEFAULT_RETRY_DELAY_MS,
  type ElectionOptions,
  type ResolvedCandidate,
  resolveCandidate,
} from './candidate-options';
import type { Election } from './election';
import { type ElectionLayout, latch } from './election-recipes';
import { termStarted } from './telemetry';

/**
 * Whether an error ends a term but not the candidacy: the lease was lost (session expired,
 * suspended under the policy, node deleted) or the session expired while queued. The candidate
 * then stands again at once, with a new node.
 */
export function isLostLeadership(error: unknown): boolean {
  return LockLostError.isInstance(error) || isZkError(error, ZkErrorCode.SessionExpired);
}

/**
 * One candidate standing in one election until it leaves: a term signal (and one already aborted
 * while not leading), runs kept in view, standing again after a loss (at once) or a failure
 * (after `retryDelayMs`, when given), and a leave that never lets two leaders work at once.
 */
export class Candidacy implements Election {
  private readonly state = new BehaviorSubject(false);
  /** Ends the current term's telemetry (a no-op between terms). */
  private endTerm: () => void = () => {};
  readonly leadership$: Observable<boolean> = this.state.pipe(distinctUntilChanged());
  /** The current term, or the last one; aborted while not leading. */
  private term: AbortController;
  private readonly closing = new AbortController();
  /** The current term's signal joined with `closing`'s, made once per term. */
  private termSignal: { readonly term: AbortSignal; readonly signal: AbortSignal } | undefined;
  private readonly runs = new LeaseRuns();
  private current: Subscription | undefined;
  private lease: Lease | undefined;
  private closed = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private closeDone: Promise<void> | undefined;
  /** Settles `joined`, until the first node is queued or the first attempt failed. */
  private settleJoined: { resolve(): void; reject(error: unknown): void } | undefined;
  readonly joined: Promise<void>;
  /** Why the candidacy ended, when it failed rather than was left. */
  failure: unknown;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly candidate: ResolvedCandidate,
    private readonly layout: ElectionLayout,
  ) {
    this.term = new AbortController();
    this.term.abort(new ZkError(ZkErrorCode.Aborted, `election ${path}: not the leader`));
    this.joined = new Promise<void>((resolve, reject) => {
      this.settleJoined = { resolve, reject };
    });
    // Awaiting it is the caller's choice: a failure is never an unhandled rejection.
    this.joined.catch(() => {});
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

  /** The current term's lease, while leading. */
  get currentLease(): Lease | undefined {
    return this.state.value ? this.lease : undefined;
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
    return this.runs.track(run);
  }

  runIfLeader<T>(work: (signal: AbortSignal) => T): T | undefined {
    const lease = this.currentLease;
    return lease ? this.runs.runUnder(lease, this.signal, work) : undefined;
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    const lease = this.currentLease;
    if (lease) return lease.guard(ops);
    try {
      validateGuardOps(ops, [], `guard of election ${this.path}`);
    } catch (error) {
      return Promise.reject(error);
    }
    // Not leading: known without a round trip (the term ended, or none began).
    return Promise.reject(this.term.signal.reason);
  }

  leave(): Promise<void> {
    this.closeDone ??= this.shutdown();
    return this.closeDone;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.leave();
  }

  /**
   * Ends the term of `lease` and stands again at the back of the queue (Curator
   * LeaderSelector's requeue): the term's signal aborts (LeaseReleasedError), its node is
   * released, a new one queued. Nothing if that term is over already.
   */
  resign(lease: Lease): void {
    if (this.closed || this.lease !== lease) return;
    this.lease = undefined;
    this.setLeading(false, new LeaseReleasedError(this.path));
    // Unsubscribing the lease's observable releases it: its delete goes out first.
    this.current?.unsubscribe();
    this.stand();
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.settleJoined?.reject(
      new ZkError(ZkErrorCode.ClientClosed, `election ${this.path}: left before it was joined`),
    );
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

  /** `ended`: why a term ends — the LockLostError of a loss, or LeaseReleasedError. */
  private setLeading(leading: boolean, ended?: Error): void {
    if (leading === this.state.value || this.state.closed) return;
    if (leading) {
      this.term = new AbortController();
      this.endTerm = termStarted({
        kind: this.layout.kind,
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
    this.retry = undefined;
    if (this.closed) return;
    this.current = this.layout.recipe
      .lease(this.client, this.path, {
        data: this.candidate.id,
        onSuspended: this.candidate.onSuspended,
        reentrant: false,
        name: this.candidate.name,
        onQueued: () => {
          this.settleJoined?.resolve();
          this.settleJoined = undefined;
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
          if (isLostLeadership(error)) return this.stand();
          this.failed(error);
        },
        complete: () => {
          // The lease ended without loss: the client closed.
          this.lease = undefined;
          void this.leave();
        },
      });
  }

  /** A failure the candidacy cannot ride out by itself: stand again later, or leave. */
  private failed(error: unknown): void {
    this.settleJoined?.reject(error);
    this.settleJoined = undefined;
    if (isZkError(error, ZkErrorCode.ClientClosed)) {
      void this.leave();
      return;
    }
    const delay = this.candidate.retryDelayMs;
    if (delay !== undefined && !this.client.isClosed) {
      this.retry = setTimeout(() => this.stand(), delay);
      this.retry.unref?.();
      return;
    }
    this.failure = error;
    void this.leave();
  }
}

/**
 * Stands in the election at `path` (latch style) and returns the candidacy at once: it leads as
 * soon as its node is first (`whenLeader()`, `leadership$`), and lasts until `leave()`. After a
 * lost leadership (session expired, suspended under the default policy, node deleted) the
 * candidate stands again by itself at once; after a failure it cannot ride out (ZooKeeper
 * unreachable, NoAuth, a conflicting lock), again after `retryDelayMs` (1 s by default), until
 * `leave()`. `joined` resolves once its first node is queued, and rejects if that first attempt
 * failed.
 *
 * ## Example
 * ```ts
 * await using election = joinElection(client, '/election/migrations', { id: 'worker-7' });
 * const signal = await election.whenLeader();
 * await election.track(runMigrations({ signal }));
 * ```
 *
 * @param client The client whose session stands.
 * @param path The election path (Curator LeaderLatch layout, `_c_<uuid>-latch-<seq>` nodes).
 * @param options The participant id, the suspended policy, the telemetry name, `retryDelayMs`.
 * @return The candidacy. Throws ZkError `BadArguments` / `InvalidPath` on bad input, before
 *   anything is sent.
 */
export function joinElection(client: ZkClient, path: string, options?: ElectionOptions): Election {
  const retryDelayMs = options?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  return new Candidacy(
    client,
    path,
    resolveCandidate(client, path, { ...options, retryDelayMs }),
    latch,
  );
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
    const candidate = resolveCandidate(client, path, { ...options, retryDelayMs: undefined });
    const candidacy = new Candidacy(client, path, candidate, latch);
    const forward = candidacy.leadership$.subscribe({
      next: (leading) => subscriber.next(leading),
      complete: () => {
        if (candidacy.failure !== undefined) subscriber.error(candidacy.failure);
        else subscriber.complete();
      },
    });
    return () => {
      forward.unsubscribe();
      void candidacy.leave();
    };
  });
}
