/**
 * All-or-nothing locking of several paths: acquired one by one in a canonical order (so two
 * multi-locks over the same paths never deadlock), what was taken is released on failure.
 */
import {
  type TransactionOp,
  type TransactionResult,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { merge, Observable, type Subscription, take } from 'rxjs';
import { acquire } from './mutex';
import type { LockLostError, LockRevokedError } from './recipe/errors';
import { LockTimeoutError } from './recipe/errors';
import { guardLeases, type Lease, lossHeard } from './recipe/lease';
import { type LockOptions, validateLockPath } from './recipe/lock-options';
import { timedAcquire } from './recipe/telemetry';

/** The leases of a multi-lock, held together. */
export interface MultiLease {
  /** The lock paths, in the order they were acquired (sorted). */
  readonly paths: readonly string[];
  readonly leases: readonly Lease[];
  /** Each path's fencing token. */
  readonly fencingTokens: Readonly<Record<string, number>>;
  /** True while every lease is held. */
  readonly isHeld: boolean;
  /** Emits the first LockLostError of any lease, then completes. */
  readonly lost$: Observable<LockLostError>;
  /** With `revocable: true`: emits the first revocation request of any lease. */
  readonly revoked$: Observable<LockRevokedError>;
  /** Aborts when any lease ends. */
  readonly signal: AbortSignal;
  /**
   * A guarded write under every lock at once: one transaction with a `check` of each lease's
   * node, then `ops`, so they land only if all the locks are held when ZooKeeper applies them.
   * Rejects with the LockLostError of the first lease found lost; otherwise as
   * {@link Lease.guard}.
   */
  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
  /** Releases every lease, the last taken first; resolves once every node is gone (see {@link Lease.release}). */
  release(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function canonicalPaths(paths: unknown): string[] {
  if (!Array.isArray(paths) || paths.length === 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      'multiLock: paths must be a non-empty array of lock paths',
    );
  }
  const valid = paths.map((path) => validateLockPath(path));
  const unique = [...new Set(valid)];
  if (unique.length !== valid.length) {
    throw new ZkError(ZkErrorCode.BadArguments, 'multiLock: the same path is given twice');
  }
  return unique.sort();
}

function makeMultiLease(paths: string[], leases: Lease[]): MultiLease {
  // Each lease's `lost$` and `signal` watch its node once asked for: so do these, lazily.
  const lost$ = merge(...leases.map((lease) => lease.lost$)).pipe(take(1));
  const revoked$ = merge(...leases.map((lease) => lease.revoked$)).pipe(take(1));
  let signal: AbortSignal | undefined;
  // Every delete sent at once, in reverse order of acquisition (one session: applied in that
  // order); resolves once every node is gone.
  const release = () => releaseAll(leases);
  return {
    paths,
    leases,
    fencingTokens: Object.fromEntries(leases.map((lease) => [lease.path, lease.fencingToken])),
    get isHeld() {
      return leases.every((lease) => lease.isHeld);
    },
    lost$,
    revoked$,
    get signal() {
      signal ??= AbortSignal.any(leases.map((lease) => lease.signal));
      return signal;
    },
    guard: (ops) => guardLeases(leases, ops, `guard of ${paths.join(', ')}`),
    release,
    [Symbol.asyncDispose]: release,
  };
}

/**
 * Acquires every lock of `paths` (in sorted order) or none: resolves the multi-lease once all
 * are held; on timeout, abort or error, releases those already taken and rejects. A lock taken
 * earlier and lost while waiting for a later one (its session expired, its connection was
 * suspended) makes it release the others and start over, within the same deadline: the
 * multi-lease it resolves holds every lock.
 */
export async function acquireAll(
  client: ZkClient,
  paths: readonly string[],
  options: LockOptions = {},
): Promise<MultiLease> {
  const sorted = canonicalPaths(paths);
  // Each lock's own acquisition is recorded too (kind `mutex`, the same name).
  return timedAcquire(
    { kind: 'multi', path: sorted.join(','), name: options.name },
    options.signal,
    () => acquireSorted(client, sorted, options),
  );
}

async function acquireSorted(
  client: ZkClient,
  sorted: string[],
  options: LockOptions,
): Promise<MultiLease> {
  const started = performance.now();
  for (;;) {
    const taken: Lease[] = [];
    const lostEarlier = new AbortController();
    const watching: Subscription[] = [];
    const signal = options.signal
      ? AbortSignal.any([options.signal, lostEarlier.signal])
      : lostEarlier.signal;
    try {
      for (const path of sorted) {
        let timeoutMs: number | undefined;
        if (options.timeoutMs !== undefined) {
          timeoutMs = options.timeoutMs - (performance.now() - started);
          if (timeoutMs < 0) throw new LockTimeoutError(path, performance.now() - started);
        }
        const lease = await acquire(client, path, { ...options, timeoutMs, signal });
        taken.push(lease);
        // What the lease hears anyway (its session): its node's watch is the caller's to ask for.
        watching.push(lossHeard(lease).subscribe((lost) => lostEarlier.abort(lost)));
      }
      if (taken.every((lease) => lease.isHeld)) return makeMultiLease(sorted, taken);
    } catch (error) {
      await releaseAll(taken);
      // An earlier lock was lost while waiting: start over (the caller's own abort is not).
      if (lostEarlier.signal.aborted && !options.signal?.aborted) continue;
      throw error;
    } finally {
      for (const subscription of watching) subscription.unsubscribe();
    }
    // Lost between the last acquisition and now: start over.
    await releaseAll(taken);
  }
}

/** Releases every lease, the last taken first: all sent now, resolved once all are gone. */
async function releaseAll(leases: readonly Lease[]): Promise<void> {
  await Promise.all([...leases].reverse().map((lease) => lease.release()));
}

/**
 * Several locks held together, as an observable: emits the {@link MultiLease} once all are
 * held, releases all on unsubscribe, errors LockLostError when any is lost.
 *
 * ## Example
 * ```ts
 * multiLock(client, ['/locks/accounts/1', '/locks/accounts/2']).subscribe((all) => transfer(all.fencingTokens));
 * ```
 */
export function multiLock(
  client: ZkClient,
  paths: readonly string[],
  options: LockOptions = {},
): Observable<MultiLease> {
  return new Observable<MultiLease>((subscriber) => {
    const controller = new AbortController();
    const signals = [options.signal, controller.signal].filter(
      (value): value is AbortSignal => value !== undefined,
    );
    let held: MultiLease | undefined;
    let lost: Subscription | undefined;
    acquireAll(client, paths, { ...options, signal: AbortSignal.any(signals) }).then(
      (multi) => {
        if (subscriber.closed) {
          void multi.release();
          return;
        }
        held = multi;
        lost = multi.lost$.subscribe((error) => subscriber.error(error));
        if (!subscriber.closed) subscriber.next(multi);
      },
      (error: unknown) => subscriber.error(error),
    );
    return () => {
      controller.abort();
      lost?.unsubscribe();
      void held?.release();
    };
  });
}
