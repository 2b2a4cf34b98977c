/**
 * `Election`: a candidacy as its candidate holds it — live state, a signal per term, runs kept in
 * view, leader-only writes, and `leave()`.
 */
import type { TransactionOp, TransactionResult } from '@zkrx/core';
import type { Observable } from 'rxjs';

/**
 * A candidacy joined with `joinElection`: live state, a signal per term, runs, and `leave()`.
 * The candidate stands until it leaves, again after each lost leadership.
 */
export interface Election {
  /**
   * Resolves once this candidate's node is in the election's queue. Rejects if that first
   * attempt failed (it stands again after `retryDelayMs` all the same, until left) or the
   * election was left first (ZkError `ClientClosed`).
   */
  readonly joined: Promise<void>;
  /** True while this candidate leads (false from the moment `leave()` is called). */
  readonly isLeader: boolean;
  /**
   * The current term's fencing token (its node's czxid, strictly increasing from one leader to
   * the next), or undefined while not leading: hand it to the stores a leader writes to.
   */
  readonly fencingToken: number | undefined;
  /** Replays whether this candidate leads, then every change; completes once left. */
  readonly leadership$: Observable<boolean>;
  /**
   * The current term's signal: aborts when this leadership ends — with the LockLostError of
   * the loss (`reason`: `session-expired`, `suspended`, `node-deleted`) — or when `leave()`
   * begins (LeaseReleasedError). Already aborted while not leading (ZkError `Aborted` before the
   * first term, else the reason the last term ended).
   */
  readonly signal: AbortSignal;
  /** Resolves the term's signal once this candidate leads; rejects ClientClosed once left. */
  whenLeader(): Promise<AbortSignal>;
  /**
   * Keeps `run` in view: `leave()` waits for it to settle before leaving the election, so the
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
   * `signal` carries: the LockLostError of the loss, LeaseReleasedError once `leave()` began,
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
   * candidate leads within a round trip of that. Resolves once the node is gone (the server
   * removed it: any session's read from then on sees it gone) or its session is, as a lease's
   * `release()`. Idempotent.
   */
  leave(): Promise<void>;
  /** Leaves the election (`await using election = joinElection(...)`). */
  [Symbol.asyncDispose](): Promise<void>;
}
