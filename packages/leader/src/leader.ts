/**
 * Leader election on the shared lock queue: latch style (Curator LeaderLatch layout) for
 * `leadership` and `elect`, selector style (Curator LeaderSelector layout) for `whileLeader`,
 * and `leader$` for anyone who wants to know who leads.
 */
import { hostname } from 'node:os';
import { isZkError, joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import {
  defineLockRecipe,
  exclusiveRule,
  LeaseReleasedError,
  LockLostError,
  Marker,
  resolveLockOptions,
  type SuspendedPolicy,
  sortChildren,
} from '@zkrx/lock';
import {
  BehaviorSubject,
  catchError,
  defer,
  distinctUntilChanged,
  EMPTY,
  from,
  Observable,
  type ObservableInput,
  repeat,
  retry,
  type Subscription,
  switchMap,
  throwError,
  timer,
} from 'rxjs';

export interface CandidateOptions {
  /** This participant's id, stored as its node's data (default `hostname:pid`). */
  id?: string;
  /**
   * While the connection is suspended leadership is uncertain: `release` (default) gives it up
   * at once, so at most one leader works at any instant; `continue` keeps it until the session
   * is known to be lost (fewer leader changes on network blips, a window of two leaders).
   */
  onSuspended?: SuspendedPolicy;
}

export interface WhileLeaderOptions extends CandidateOptions {
  /** Join the election again when the work completes (Curator's autoRequeue). Default true. */
  requeue?: boolean;
}

/** Who leads an election, and who stands in it. */
export interface LeaderInfo {
  /** The leader's participant id, or undefined when nobody stands. */
  readonly leaderId: string | undefined;
  /** Every candidate in queue order; the first one leads. */
  readonly participants: readonly { readonly id: string; readonly isLeader: boolean }[];
}

const latch = defineLockRecipe({
  kind: 'leader-latch',
  marker: Marker.latch,
  decide: exclusiveRule,
});
const selector = defineLockRecipe({
  kind: 'leader-selector',
  marker: Marker.lock,
  decide: exclusiveRule,
});

const defaultId = `${hostname()}:${process.pid}`;

function resolveCandidate(client: unknown, path: unknown, options: CandidateOptions | undefined) {
  const id = options?.id ?? defaultId;
  if (typeof id !== 'string' || id.length === 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `leader: id must be a non-empty string, got ${String(id)}`,
    );
  }
  // Same checks as every lock (path, policy, client); the id becomes the node's data.
  resolveLockOptions(
    client,
    path,
    { onSuspended: options?.onSuspended, data: id },
    'leader election',
  );
  return { id, onSuspended: options?.onSuspended ?? 'release' };
}

function isClosed(error: unknown): boolean {
  return isZkError(error, ZkErrorCode.ClientClosed);
}

/**
 * This candidate's leadership as an observable: `false` at once, `true` when elected, `false`
 * when leadership is lost (session expired, suspended under the default policy), after which
 * the candidate stands again by itself. Unsubscribing leaves the election. Completes when the
 * client closes. Only a candidate whose node is first AND owned by its current session leads.
 *
 * ## Example
 * ```ts
 * leadership(client, '/election/scheduler', { id: 'worker-7' }).subscribe((leading) => console.log(leading));
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
    let candidate: ReturnType<typeof resolveCandidate>;
    try {
      candidate = resolveCandidate(client, path, options);
    } catch (error) {
      subscriber.error(error);
      return;
    }
    const leading = new BehaviorSubject(false);
    const forward = leading.pipe(distinctUntilChanged()).subscribe(subscriber);
    let current: Subscription | undefined;
    let stopped = false;
    const stand = (): void => {
      if (stopped) return;
      current = latch
        .lease$(client, path, {
          data: candidate.id,
          onSuspended: candidate.onSuspended,
          reentrant: false,
        })
        .subscribe({
          next: () => leading.next(true),
          error: (error: unknown) => {
            leading.next(false);
            // Lost leadership (or the session went while queued): stand again.
            if (error instanceof LockLostError || isZkError(error, ZkErrorCode.SessionExpired))
              return stand();
            if (isClosed(error)) return subscriber.complete();
            subscriber.error(error);
          },
          complete: () => {
            leading.next(false);
            subscriber.complete();
          },
        });
    };
    stand();
    return () => {
      stopped = true;
      current?.unsubscribe();
      forward.unsubscribe();
    };
  });
}

/**
 * Runs `work` only while this candidate leads (Curator LeaderSelector layout: a mutex on the
 * path, data = id): subscribes to it once elected, unsubscribes it the moment leadership ends,
 * and stands again. When the work completes, leadership is handed over and (by default) the
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
  work: () => ObservableInput<T>,
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
    const term = defer(() => from(work())).pipe(
      selector.guard<T>(client, path, {
        data: candidate.id,
        onSuspended: candidate.onSuspended,
        reentrant: false,
      }),
    );
    const terms = options?.requeue === false ? term : term.pipe(repeat());
    return terms.pipe(
      // Leadership lost mid-work: the work is already unsubscribed; stand again.
      retry({
        delay: (error: unknown) =>
          error instanceof LockLostError || isZkError(error, ZkErrorCode.SessionExpired)
            ? timer(0)
            : throwError(() => error),
      }),
      catchError((error: unknown) => (isClosed(error) ? EMPTY : throwError(() => error))),
    );
  });
}

/**
 * Who leads the election at `path`, for anyone (candidate or not): emits at once and on every
 * change. Works on latch (`latch-`) and selector (`lock-`) elections, Curator's included.
 *
 * ## Example
 * ```ts
 * leader$(client, '/election/scheduler').subscribe(({ leaderId }) => console.log('leader:', leaderId));
 * ```
 */
export function leader$(client: ZkClient, path: string): Observable<LeaderInfo> {
  return defer(() => {
    resolveLockOptions(client, path, {}, 'leader election');
    const ids = new Map<string, string>();
    return client.watchChildren(path).pipe(
      switchMap(async (names) => {
        const children = sortChildren(names).filter(
          (child) => child.kind === 'latch' || child.kind === 'exclusive',
        );
        for (const name of [...ids.keys()]) if (!names.includes(name)) ids.delete(name);
        const participants: { id: string; isLeader: boolean }[] = [];
        for (const child of children) {
          let id = ids.get(child.name);
          if (id === undefined) {
            try {
              id = (await client.promises.get(joinPath(path, child.name))).data.toString('utf8');
            } catch (error) {
              if (isZkError(error, ZkErrorCode.NoNode)) continue;
              throw error;
            }
            ids.set(child.name, id);
          }
          participants.push({ id, isLeader: participants.length === 0 });
        }
        return { leaderId: participants[0]?.id, participants } satisfies LeaderInfo;
      }),
      distinctUntilChanged(
        (a, b) =>
          a.leaderId === b.leaderId &&
          a.participants.length === b.participants.length &&
          a.participants.every(
            (participant, index) => participant.id === b.participants[index]?.id,
          ),
      ),
    );
  });
}

/** A candidacy joined with `elect`: live state, a signal per term, and `close()` to leave. */
export interface Election {
  /** True while this candidate leads. */
  readonly isLeader: boolean;
  /** Replays whether this candidate leads, then every change; completes on close. */
  readonly leadership$: Observable<boolean>;
  /**
   * The current term's signal: aborts when this leadership ends, with the LockLostError of the
   * loss (`reason`: `session-expired`, `suspended`, `node-deleted`), or LeaseReleasedError when
   * the election closes. Already aborted (ZkError `Aborted`) while not leading.
   */
  readonly signal: AbortSignal;
  /** Resolves the term's signal once this candidate leads. */
  whenLeader(): Promise<AbortSignal>;
  /** Leaves the election (handing leadership over within one round trip). Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Stands in the election at `path` (latch style) and resolves once this candidate's node is in
 * the queue. The candidacy lasts until `close()`.
 *
 * ## Example
 * ```ts
 * await using election = await elect(client, '/election/migrations', { id: 'worker-7' });
 * const signal = await election.whenLeader();
 * await runMigrations({ signal });
 * ```
 */
export function elect(
  client: ZkClient,
  path: string,
  options?: CandidateOptions,
): Promise<Election> {
  return new Promise<Election>((resolve, reject) => {
    let candidate: ReturnType<typeof resolveCandidate>;
    try {
      candidate = resolveCandidate(client, path, options);
    } catch (error) {
      reject(error);
      return;
    }
    const state = new BehaviorSubject(false);
    let term = new AbortController();
    term.abort(new ZkError(ZkErrorCode.Aborted, `election ${path}: not the leader`));
    let current: Subscription | undefined;
    let currentLease: { release(): Promise<void> } | undefined;
    let closed = false;
    let joined = false;
    const election: Election = {
      get isLeader() {
        return state.value;
      },
      leadership$: state.pipe(distinctUntilChanged()),
      get signal() {
        return term.signal;
      },
      whenLeader() {
        if (state.value) return Promise.resolve(term.signal);
        return new Promise<AbortSignal>((resolveTerm, rejectTerm) => {
          const subscription = state.subscribe({
            next: (leading) => {
              if (!leading) return;
              queueMicrotask(() => subscription.unsubscribe());
              resolveTerm(term.signal);
            },
            complete: () =>
              rejectTerm(new ZkError(ZkErrorCode.ClientClosed, `election ${path}: closed`)),
          });
        });
      },
      async close() {
        if (closed) return;
        closed = true;
        // Release first and wait for it: the next candidate is told as the node goes.
        const handover = currentLease?.release();
        current?.unsubscribe();
        setLeading(false, new LeaseReleasedError(path));
        state.complete();
        await handover;
      },
      [Symbol.asyncDispose]() {
        return election.close();
      },
    };
    /** `ended`: why a term ends — the LockLostError of a loss, or LeaseReleasedError on close. */
    const setLeading = (leading: boolean, ended?: Error) => {
      if (leading === state.value || state.closed) return;
      if (leading) term = new AbortController();
      else term.abort(ended ?? new LeaseReleasedError(path));
      state.next(leading);
    };
    const stand = (): void => {
      if (closed) return;
      current = latch
        .lease$(client, path, {
          data: candidate.id,
          onSuspended: candidate.onSuspended,
          reentrant: false,
          onQueued: () => {
            if (!joined) {
              joined = true;
              resolve(election);
            }
          },
        })
        .subscribe({
          next: (lease) => {
            currentLease = lease;
            setLeading(true);
          },
          error: (error: unknown) => {
            setLeading(false, error instanceof Error ? error : undefined);
            if (error instanceof LockLostError || isZkError(error, ZkErrorCode.SessionExpired))
              return stand();
            if (!joined) reject(error);
            void election.close();
          },
          complete: () => {
            setLeading(false);
            void election.close();
          },
        });
    };
    stand();
  });
}
