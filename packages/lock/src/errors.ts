/**
 * The errors of the lock recipes: what a caller needs to act on a timeout or a lost lock. Each
 * has a stable `code` and a static `isInstance` that recognises it across copies of the package
 * (its ESM and CommonJS builds); `instanceof` answers the same.
 */
import { errorIdentity } from '@zkrx/core';

/** Why a held lock was lost. */
export type LockLostReason = 'session-expired' | 'suspended' | 'node-deleted';

const lostIdentity = errorIdentity('@zkrx/lock.LockLostError');

/**
 * The lock was held and no longer is (or may no longer be): stop the work it guards.
 *
 * - `session-expired`: the session ended, its lock node with it; another client may hold it.
 * - `suspended`: the connection was lost and the policy is to stop at once (ownership uncertain).
 * - `node-deleted`: the lock node was deleted by someone else.
 *
 * From a guarded write (`lease.guard`), it means nothing was written — unless `cause` is a ZkError
 * `ConnectionLoss`/`OperationTimeout`: the transaction was in flight when the connection dropped,
 * and ZooKeeper may have applied it (then while the lock was still held, never after).
 */
export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  readonly code = 'LockLost';
  constructor(
    readonly path: string,
    readonly reason: LockLostReason,
    options?: { cause?: unknown },
  ) {
    super(
      `Lock ${path} lost: ${reason}${options?.cause === undefined ? '' : ` (${(options.cause as Error).message ?? String(options.cause)})`}`,
      options,
    );
    lostIdentity.mark(this);
  }

  /** True for a LockLostError from any copy of @zkrx/lock in the process. */
  static isInstance(value: unknown): value is LockLostError {
    return lostIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return lostIdentity.is(value);
  }
}

const timeoutIdentity = errorIdentity('@zkrx/lock.LockTimeoutError');

/**
 * The lock was not acquired within `timeoutMs`; nothing is left behind in ZooKeeper (the node's
 * removal is under way when this is thrown). When the client was not connected for the whole
 * wait, `cause` is a ZkError saying so: `ConnectTimeout` (never connected) or `ConnectionLoss`
 * (connected at some moment, not at the end) — ZooKeeper unreachable, not a busy lock.
 */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
  readonly code = 'LockTimeout';
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      `Lock ${path} not acquired within ${Math.round(waitedMs)} ms${options?.cause === undefined ? '' : ` (${(options.cause as Error).message ?? String(options.cause)})`}`,
      options,
    );
    timeoutIdentity.mark(this);
  }

  /** True for a LockTimeoutError from any copy of @zkrx/lock in the process. */
  static isInstance(value: unknown): value is LockTimeoutError {
    return timeoutIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return timeoutIdentity.is(value);
  }
}

const conflictIdentity = errorIdentity('@zkrx/lock.LockConflictError');

/**
 * Two kinds of lock were asked for on one path whose layouts cannot queue together: a semaphore
 * (its `leases` and `locks` children) and a queue lock (mutex, read or write lock, election).
 * Thrown by the one that finds the other's nodes there; it created nothing that stays.
 */
export class LockConflictError extends Error {
  override readonly name = 'LockConflictError';
  readonly code = 'LockConflict';
  constructor(
    readonly path: string,
    /** The lock that was asked for (`semaphore`, `mutex (or whileLeader election)`, ...). */
    readonly asked: string,
    /** The lock whose nodes are at the path. */
    readonly found: string,
  ) {
    super(
      `Cannot take a ${asked} at ${path}: a ${found} uses that path (its nodes are there). Give each lock its own path.`,
    );
    conflictIdentity.mark(this);
  }

  /** True for a LockConflictError from any copy of @zkrx/lock in the process. */
  static isInstance(value: unknown): value is LockConflictError {
    return conflictIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return conflictIdentity.is(value);
  }
}

const revokedIdentity = errorIdentity('@zkrx/lock.LockRevokedError');

/**
 * Someone asked the holder of a revocable lease to give it up (`requestRevoke`, or Curator's
 * `Revoker.attemptRevoke`): the lease is still held — the holder decides when to release.
 */
export class LockRevokedError extends Error {
  override readonly name = 'LockRevokedError';
  readonly code = 'LockRevoked';
  readonly reason = 'revoked';
  constructor(
    readonly path: string,
    /** The lock node whose holder is asked to release. */
    readonly node: string,
  ) {
    super(`Lock ${path}: its holder is asked to release it (revoked)`);
    revokedIdentity.mark(this);
  }

  /** True for a LockRevokedError from any copy of @zkrx/lock in the process. */
  static isInstance(value: unknown): value is LockRevokedError {
    return revokedIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return revokedIdentity.is(value);
  }
}

const releasedIdentity = errorIdentity('@zkrx/lock.LeaseReleasedError');

/**
 * The reason a lease's signal aborts with when it is released rather than lost (named
 * `AbortError`, as aborts are).
 */
export class LeaseReleasedError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'LeaseReleased';
  constructor(readonly path: string) {
    super(`Lease on ${path} released`);
    releasedIdentity.mark(this);
  }

  /** True for a LeaseReleasedError from any copy of @zkrx/lock in the process. */
  static isInstance(value: unknown): value is LeaseReleasedError {
    return releasedIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return releasedIdentity.is(value);
  }
}
