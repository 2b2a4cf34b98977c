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
import type { Lease } from '@zkrx/lock';
import { defer, from, Observable, type ObservableInput, type Subscription } from 'rxjs';
import { Candidacy, isLostLeadership } from './candidacy';
import { type CandidateOptions, resolveCandidate } from './candidate-options';
import { selector } from './election-recipes';

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

/** The term `lease` begins, as the work is given it. */
function termOf(lease: Lease): LeaderTerm {
  return {
    fencingToken: lease.fencingToken,
    node: lease.node,
    signal: lease.signal,
    guard: (ops) => lease.guard(ops),
  };
}

/**
 * Runs `work` only while this candidate leads (Curator LeaderSelector layout: a mutex on the
 * path, data = id): calls it with the term (fencing token, node, signal) once elected,
 * unsubscribes it the moment leadership ends, and stands again. When the work completes,
 * leadership is handed over and (by default) the candidate queues again. Completes when the
 * client closes; errors with the work's own error.
 *
 * ## Example
 * ```ts
 * whileLeader(client, '/election/scheduler', () => interval(60_000).pipe(mergeMap(runJobs)), { id: 'worker-7' })
 *   .subscribe({ error: (error) => console.error('scheduler failed:', error) });
 * ```
 *
 * @param client The client whose session stands.
 * @param path The election path (Curator LeaderSelector layout, `_c_<uuid>-lock-<seq>` nodes).
 * @param work What the leader does, given its term; subscribed once per term.
 * @param options The participant id, the suspended policy, the telemetry name, `requeue`.
 * @return What the work emits, term after term.
 */
export function whileLeader<T>(
  client: ZkClient,
  path: string,
  work: (term: LeaderTerm) => ObservableInput<T>,
  options?: WhileLeaderOptions,
): Observable<T> {
  return defer(() => {
    const candidate = resolveCandidate(client, path, { ...options, retryDelayMs: undefined });
    if (typeof work !== 'function') {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        'whileLeader: work must be a function returning the work',
      );
    }
    const requeue = options?.requeue !== false;
    return new Observable<T>((subscriber) => {
      const candidacy = new Candidacy(client, path, candidate, selector);
      let running: Subscription | undefined;
      /** The term's work ended: hand over (out of the emission that may be under way). */
      const handOver = (lease: Lease) => queueMicrotask(() => candidacy.resign(lease));
      const terms = candidacy.leadership$.subscribe({
        next: () => {
          // A term ended or began: the work of the one before is unsubscribed first.
          running?.unsubscribe();
          running = undefined;
          const lease = candidacy.currentLease;
          if (!lease) return;
          let input: ObservableInput<T>;
          try {
            input = work(termOf(lease));
          } catch (error) {
            subscriber.error(error);
            return;
          }
          running = from(input).subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => {
              // The work saw its term lost (a guard's LockLostError): a loss, not a failure.
              if (isLostLeadership(error)) handOver(lease);
              else if (isZkError(error, ZkErrorCode.ClientClosed)) subscriber.complete();
              else subscriber.error(error);
            },
            complete: () => (requeue ? handOver(lease) : subscriber.complete()),
          });
        },
        complete: () => {
          if (candidacy.failure === undefined) subscriber.complete();
          else subscriber.error(candidacy.failure);
        },
      });
      return () => {
        // Stop the work first, then leave (the node goes last).
        running?.unsubscribe();
        terms.unsubscribe();
        void candidacy.leave();
      };
    });
  });
}
