/**
 * The exclusive lock (Curator InterProcessMutex layout): mutex observable, promise API,
 * try-once, the guarding operator and the keyed operator for streams of items.
 */
import { type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import {
  defer,
  from,
  type MonoTypeOperatorFunction,
  mergeMap,
  type ObservableInput,
  type OperatorFunction,
} from 'rxjs';
import { heldInContext } from './recipe/hold';
import type { Lease } from './recipe/lease';
import type { LockOptions } from './recipe/lock-options';
import { mutexRecipe } from './recipe/mutex-recipe';

/**
 * An exclusive lock as an observable: emits the {@link Lease} once held, releases it on
 * unsubscribe, errors with LockLostError when ownership is lost (session expired, suspended
 * under the default policy, node deleted) and LockTimeoutError after `timeoutMs`.
 *
 * Herd-free: a waiter watches only the node just before it, so a release wakes exactly one
 * client. Shares the path with Curator's InterProcessMutex (and kazoo's Lock configured with
 * `extra_lock_patterns=["-lock-"]`).
 *
 * ## Example
 * ```ts
 * mutex(client, '/locks/orders', { timeoutMs: 5_000 }).subscribe((lease) => {
 *   console.log('holding', lease.fencingToken > 0);
 * });
 * // Output: holding true
 * ```
 *
 * @param client The client whose session holds the lock.
 * @param path The lock path (parent of the lock nodes).
 * @param options Timeout, abort signal, suspended policy, re-entrancy, node data.
 * @return An observable of the lease.
 */
export function mutex(client: ZkClient, path: string, options?: LockOptions) {
  return mutexRecipe.lease(client, path, options);
}

/**
 * Acquires an exclusive lock: resolves the lease once held.
 *
 * ## Example
 * ```ts
 * await using lease = await acquire(client, '/locks/orders', { timeoutMs: 5_000 });
 * await store.write(order, { fencingToken: lease.fencingToken });
 * ```
 */
export function acquire(client: ZkClient, path: string, options?: LockOptions): Promise<Lease> {
  return mutexRecipe.acquire(client, path, options);
}

/** Acquires the lock if it is free right now: the lease, or null. Never waits. */
export function tryAcquire(
  client: ZkClient,
  path: string,
  options?: Omit<LockOptions, 'timeoutMs'>,
): Promise<Lease | null> {
  return mutexRecipe.tryAcquire(client, path, options);
}

/**
 * Runs the source only while holding the lock: subscribes to it once acquired, releases the
 * lock when it completes, errors or is unsubscribed, and unsubscribes it (erroring with
 * LockLostError) the moment the lock is lost.
 *
 * ## Example
 * ```ts
 * defer(() => chargeCard(order)).pipe(withLock(client, `/locks/orders/${order.id}`)).subscribe();
 * ```
 */
export function withLock<T>(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): MonoTypeOperatorFunction<T> {
  return mutexRecipe.withLock<T>(client, path, options);
}

/**
 * Acquires the lock, runs `fn` in a context holding it (re-acquiring inside re-enters), and
 * releases it when `fn` settles. `fn` gets the lease: pass `lease.signal` to what can be aborted.
 */
export async function runLocked<T>(
  client: ZkClient,
  path: string,
  fn: (lease: Lease) => T | Promise<T>,
  options?: LockOptions,
): Promise<T> {
  const lease = await acquire(client, path, options);
  try {
    return await lease.run(() => fn(lease));
  } finally {
    await lease.release();
  }
}

/** The exclusive lease this client holds on `path` in the current async context, if any. */
export function heldLease(
  client: ZkClient,
  path: string,
): { readonly signal: AbortSignal; readonly fencingToken: number } | undefined {
  const hold = heldInContext(client, 'mutex', path);
  return hold ? { signal: hold.signal, fencingToken: hold.fencingToken } : undefined;
}

export interface MergeMapLockedOptions extends LockOptions {
  /** The client (when not given as first argument). */
  client?: ZkClient;
  /** Most items in flight at once (each under its own lock). Default unbounded. */
  concurrency?: number;
}

/**
 * Processes a stream of items, each under the lock of its own key: like `mergeMap`, but
 * `project(item)` runs only while holding the lock `lockPath(item)`, released when its
 * output completes.
 *
 * ## Example
 * ```ts
 * orders$.pipe(
 *   mergeMapLocked((order) => `/locks/orders/${order.id}`, (order) => ship(order), { client, concurrency: 4 }),
 * ).subscribe();
 * ```
 */
export function mergeMapLocked<T, R>(
  lockPath: (item: T, index: number) => string,
  project: (item: T, index: number) => ObservableInput<R>,
  options: MergeMapLockedOptions & { client: ZkClient },
): OperatorFunction<T, R>;
export function mergeMapLocked<T, R>(
  client: ZkClient,
  lockPath: (item: T, index: number) => string,
  project: (item: T, index: number) => ObservableInput<R>,
  options?: MergeMapLockedOptions,
): OperatorFunction<T, R>;
export function mergeMapLocked<T, R>(
  first: ZkClient | ((item: T, index: number) => string),
  second: ((item: T, index: number) => string) | ((item: T, index: number) => ObservableInput<R>),
  third?:
    | ((item: T, index: number) => ObservableInput<R>)
    | (MergeMapLockedOptions & { client: ZkClient }),
  fourth?: MergeMapLockedOptions,
): OperatorFunction<T, R> {
  const clientFirst = typeof first !== 'function';
  const options = (clientFirst ? fourth : third) as MergeMapLockedOptions | undefined;
  const client = (clientFirst ? first : options?.client) as ZkClient;
  const lockPath = (clientFirst ? second : first) as (item: T, index: number) => string;
  const project = (clientFirst ? third : second) as (item: T, index: number) => ObservableInput<R>;
  const { concurrency, client: _client, ...lockOptions } = options ?? {};
  if (!client) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      'mergeMapLocked: pass the client first or as options.client',
    );
  }
  return mergeMap(
    (item: T, index: number) =>
      defer(() => from(project(item, index))).pipe(
        withLock<R>(client, lockPath(item, index), lockOptions),
      ),
    concurrency ?? Number.POSITIVE_INFINITY,
  );
}
