/**
 * The lock a @Locked method runs under, readable from anywhere in its async context: its path,
 * fencing token and an AbortSignal that aborts the moment the lock is lost.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The lock held by the @Locked method running in the current async context. */
export interface CurrentLock {
  /** The lock path. */
  readonly path: string;
  /** The lock node's fencing token: hand it to the store you write to. */
  readonly fencingToken: number;
  /**
   * Aborts when the lock is lost (reason: the LockLostError the call rejects with), when an
   * enclosing @Locked method's lock is lost, when the application begins to shut down (reason:
   * ZkError `ClientClosed`: finish up, the lock is held until the method returns), or when the
   * method has returned and the lock is released (reason: an `AbortError`).
   */
  readonly signal: AbortSignal;
}

const storage = new AsyncLocalStorage<CurrentLock>();

/** Runs `fn` with `lock` as the current lock. */
export function runWithLock<T>(lock: CurrentLock, fn: () => T): T {
  return storage.run(lock, fn);
}

/**
 * The lock of the innermost @Locked method running in the current async context, or undefined
 * outside one.
 *
 * ## Example
 * ```ts
 * @Locked('/locks/ledger')
 * async post(entry: Entry) {
 *   const { fencingToken } = currentLock()!;
 *   await this.store.write(entry, { fencingToken });
 * }
 * ```
 *
 * @return The current lock, or undefined.
 */
export function currentLock(): CurrentLock | undefined {
  return storage.getStore();
}

/**
 * The AbortSignal of the @Locked method running in the current async context: it aborts the
 * moment the lock is lost (its reason is the LockLostError the call rejects with). Pass it to
 * whatever can be cancelled. Undefined outside a @Locked method.
 *
 * ## Example
 * ```ts
 * @Locked('/locks/reindex')
 * async reindex() {
 *   for (const batch of await this.batches()) {
 *     lockSignal()?.throwIfAborted();
 *     await fetch(batch.url, { method: 'POST', signal: lockSignal() });
 *   }
 * }
 * ```
 *
 * @return The current lock's signal, or undefined.
 */
export function lockSignal(): AbortSignal | undefined {
  return storage.getStore()?.signal;
}
