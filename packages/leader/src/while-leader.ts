/**
 * `whileLeader`: work that runs only while this candidate leads (Curator LeaderSelector layout),
 * unsubscribed the moment leadership ends, and queued again when it completes.
 */
import {
  isZkError,
  type TransactionOp,
  type TransactionResult,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { LockLostError } from '@zkrx/lock';
import {
  catchError,
  defer,
  EMPTY,
  finalize,
  from,
  type Observable,
  type ObservableInput,
  repeat,
  retry,
  throwError,
  timer,
} from 'rxjs';
import { type CandidateOptions, resolveCandidate, selector } from './options';
import { termStarted } from './telemetry';

/** One term of leadership, as `whileLeader` hands it to the work. */
export interface LeaderTerm {
  /**
   * The term's fencing token (its node's czxid): strictly increases from one leader to the
   * next, so a store can refuse a write from a leader that has been replaced.
   */
  readonly fencingToken: number;
  /** The leader's node. */
  readonly node: string;
  /** Aborts when the term ends, with the LockLostError of the loss or LeaseReleasedError. */
  readonly signal: AbortSignal;
  /**
   * A write of this term only: applies `ops` in one ZooKeeper transaction behind a `check` of
   * the term's node, so they land only while this term lasts — even if the leader has not heard
   * yet that it ended. Rejects with LockLostError once the term is lost (nothing written),
   * LeaseReleasedError once it ended otherwise, the failing op's ZkError, or `BadArguments`; see
   * `Lease.guard` in @zkrx/lock.
   */
  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
}

export interface WhileLeaderOptions extends CandidateOptions {
  /** Join the election again when the work completes (Curator's autoRequeue). Default true. */
  requeue?: boolean;
}

function isClosed(error: unknown): boolean {
  return isZkError(error, ZkErrorCode.ClientClosed);
}

/**
 * Runs `work` only while this candidate leads (Curator LeaderSelector layout: a mutex on the
 * path, data = id): calls it with the term (fencing token, node, signal) once elected,
 * unsubscribes it the moment leadership ends, and stands again. When the work completes, leadership is handed over and (by default) the
 * candidate queues again. Completes when the client closes.
 *
 * ## Example
 * ```ts
 * whileLeader(client, '/election/scheduler', () => interval(60_000).pipe(mergeMap(runJobs)), { id: 'worker-7' })
 *   .subscribe();
 * ```
 */
export function whileLeader<T>(
  client: ZkClient,
  path: string,
  work: (term: LeaderTerm) => ObservableInput<T>,
  options?: WhileLeaderOptions,
): Observable<T> {
  return defer(() => {
    const candidate = resolveCandidate(client, path, options);
    if (typeof work !== 'function') {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        'whileLeader: work must be a function returning the work',
      );
    }
    const labels = { kind: 'leader-selector', path, name: candidate.name };
    const term = selector.holding<T>(
      client,
      path,
      {
        data: candidate.id,
        onSuspended: candidate.onSuspended,
        reentrant: false,
        name: candidate.name,
      },
      (lease) =>
        defer(() => {
          // The work is unsubscribed the moment the term ends (lost or released).
          const endTerm = termStarted(labels);
          return from(
            work({
              fencingToken: lease.fencingToken,
              node: lease.node,
              signal: lease.signal,
              guard: (ops) => lease.guard(ops),
            }),
          ).pipe(finalize(endTerm));
        }),
    );
    const terms = options?.requeue === false ? term : term.pipe(repeat());
    return terms.pipe(
      // Leadership lost mid-work: the work is already unsubscribed; stand again.
      retry({
        delay: (error: unknown) =>
          LockLostError.isInstance(error) || isZkError(error, ZkErrorCode.SessionExpired)
            ? timer(0)
            : throwError(() => error),
      }),
      catchError((error: unknown) => (isClosed(error) ? EMPTY : throwError(() => error))),
    );
  });
}
