/**
 * ZkTestingModule's elections: @zkrx/leader's own candidacy (`@zkrx/leader/candidacy`) — its
 * standing, terms, waits, runs kept in view and leaving — over terms granted in memory, when the
 * test (or `leading`) says so, for @LeaderOnly and LeaderService.
 */
import type { TransactionOp, TransactionResult, ZkClient } from '@zkrx/core';
import type { Election } from '@zkrx/leader';
import type { Candidacy } from '@zkrx/leader/candidacy';
import { type Lease, LeaseReleasedError, LockLostError, type LockLostReason } from '@zkrx/lock';
import { Observable, type Subscriber } from 'rxjs';
import type { TestLedger } from './test-options';

/** The terms of one election path in memory: granted by the test, lost at its call. */
export class TestTerms {
  /** A term is due: the next standing leads at once (`leading`, or `lead(path)`). */
  private granted: boolean;
  /** The candidate standing now (subscribed to `stand`), and its term once it leads. */
  private standing: { readonly subscriber: Subscriber<Lease>; term?: TestTerm } | undefined;

  constructor(
    readonly path: string,
    private readonly ledger: TestLedger,
    leading: boolean,
  ) {
    this.granted = leading;
  }

  /**
   * The candidacy's source of terms (its layout's `lease`): queued at once, then a lease when a
   * term is granted; errors LockLostError when the test ends the term; the term ends when the
   * candidacy lets go of it.
   */
  stand(options: { onQueued?: (node: string) => void } | undefined): Observable<Lease> {
    return new Observable<Lease>((subscriber) => {
      const standing: { readonly subscriber: Subscriber<Lease>; term?: TestTerm } = { subscriber };
      this.standing = standing;
      options?.onQueued?.(`${this.path}/test-candidate`);
      this.grant();
      return () => {
        if (this.standing === standing) this.standing = undefined;
        standing.term?.end(new LeaseReleasedError(this.path));
      };
    });
  }

  /** This application leads (a new term), now or at its next standing. */
  lead(): void {
    this.granted = true;
    this.grant();
  }

  /** The current term ends with a loss: the candidate stands again, and leads once granted. */
  lose(reason: LockLostReason): void {
    this.granted = false;
    const standing = this.standing;
    if (!standing?.term) return;
    this.standing = undefined;
    const lost = new LockLostError(this.path, reason);
    standing.term.end(lost);
    standing.subscriber.error(lost);
  }

  private grant(): void {
    const standing = this.standing;
    if (!this.granted || !standing || standing.term) return;
    this.granted = false;
    standing.term = new TestTerm(this.path, this.ledger.nextToken(), this.ledger);
    standing.subscriber.next(standing.term as unknown as Lease);
  }
}

/** One term in memory: what the candidacy uses of its lease. */
class TestTerm implements Pick<Lease, 'path' | 'node' | 'fencingToken' | 'signal' | 'isHeld'> {
  private readonly controller = new AbortController();
  readonly node: string;

  constructor(
    readonly path: string,
    readonly fencingToken: number,
    private readonly ledger: TestLedger,
  ) {
    this.node = `${path}/test-${fencingToken}`;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get isHeld(): boolean {
    return !this.controller.signal.aborted;
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    if (!this.isHeld) return Promise.reject(this.signal.reason);
    return this.ledger.guard(this.path, ops);
  }

  run<T>(fn: () => T): T {
    return fn();
  }

  release(): Promise<void> {
    this.end(new LeaseReleasedError(this.path));
    return Promise.resolve();
  }

  end(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/**
 * An election of this application on `terms`: the candidacy `joinElection` makes, standing in
 * memory. `client` is the module's stand-in client, which the candidacy never uses here.
 */
export function testElection(
  CandidacyOf: typeof Candidacy,
  client: ZkClient,
  terms: TestTerms,
  id: string,
): Election {
  return new CandidacyOf(
    client,
    terms.path,
    { id, onSuspended: 'release', name: undefined, retryDelayMs: undefined },
    {
      kind: 'leader-latch',
      recipe: { lease: (_client, _path, options) => terms.stand(options) },
    },
  );
}
