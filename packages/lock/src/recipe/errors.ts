/**
 * The errors of the lock recipes: what a caller needs to act on a timeout or a lost lock. Each
 * is a ZkrxError (@zkrx/core's base) with a stable `code` and a static `isInstance` that
 * recognises it across copies of the package (its ESM and CommonJS builds), as `instanceof` does.
 */
import { ZkrxError, type ZkrxErrorOptions } from '@zkrx/core';

/** Why a held lock was lost. */
export type LockLostReason = 'session-expired' | 'suspended' | 'node-deleted';

/** `message`, then the cause's message in parentheses when there is a cause. */
function withCause(message: string, options: ZkrxErrorOptions | undefined): string {
  const cause = options?.cause;
  if (cause === undefined) return message;
  return `${message} (${(cause as Error).message ?? String(cause)})`;
}

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
export class LockLostError extends ZkrxError<'LockLost'> {
  protected static override readonly marker = '@zkrx/lock.LockLostError';
  declare static readonly isInstance: (value: unknown) => value is LockLostError;
  override readonly name = 'LockLostError';

  constructor(
    readonly path: string,
    readonly reason: LockLostReason,
    options?: ZkrxErrorOptions,
  ) {
    super('LockLost', withCause(`Lock ${path} lost: ${reason}`, options), options);
  }
}

/**
 * The lock was not acquired within `timeoutMs`; nothing is left behind in ZooKeeper (the node's
 * removal is under way when this is thrown). When the client was not connected for the whole
 * wait, `cause` is a ZkError saying so: `ConnectTimeout` (never connected) or `ConnectionLoss`
 * (connected at some moment, not at the end) — ZooKeeper unreachable, not a busy lock.
 */
export class LockTimeoutError extends ZkrxError<'LockTimeout'> {
  protected static override readonly marker = '@zkrx/lock.LockTimeoutError';
  declare static readonly isInstance: (value: unknown) => value is LockTimeoutError;
  override readonly name = 'LockTimeoutError';

  constructor(
    readonly path: string,
    readonly waitedMs: number,
    options?: ZkrxErrorOptions,
  ) {
    const message = `Lock ${path} not acquired within ${Math.round(waitedMs)} ms`;
    super('LockTimeout', withCause(message, options), options);
  }
}

/**
 * The lock is held by another and the caller asked not to wait (a skipped `@Locked` route in
 * @zkrx/nestjs): the resource is busy, try again later. Nothing is left in ZooKeeper.
 */
export class LockBusyError extends ZkrxError<'LockBusy'> {
  protected static override readonly marker = '@zkrx/lock.LockBusyError';
  declare static readonly isInstance: (value: unknown) => value is LockBusyError;
  override readonly name = 'LockBusyError';

  constructor(readonly path: string) {
    super('LockBusy', `Lock ${path} is busy: another holder has it`);
  }
}

/**
 * Two kinds of lock were asked for on one path whose layouts cannot queue together: a semaphore
 * (its `leases` and `locks` children) and a queue lock (mutex, read or write lock, election).
 * Thrown by the one that finds the other's nodes there; it created nothing that stays.
 */
export class LockConflictError extends ZkrxError<'LockConflict'> {
  protected static override readonly marker = '@zkrx/lock.LockConflictError';
  declare static readonly isInstance: (value: unknown) => value is LockConflictError;
  override readonly name = 'LockConflictError';

  constructor(
    readonly path: string,
    /** The lock that was asked for (`semaphore`, `mutex (or whileLeader election)`, ...). */
    readonly asked: string,
    /** The lock whose nodes are at the path. */
    readonly found: string,
  ) {
    super(
      'LockConflict',
      `Cannot take a ${asked} at ${path}: a ${found} uses that path (its nodes are there). Give each lock its own path.`,
    );
  }
}

/**
 * Someone asked the holder of a revocable lease to give it up (`requestRevoke`, or Curator's
 * `Revoker.attemptRevoke`): the lease is still held — the holder decides when to release.
 */
export class LockRevokedError extends ZkrxError<'LockRevoked'> {
  protected static override readonly marker = '@zkrx/lock.LockRevokedError';
  declare static readonly isInstance: (value: unknown) => value is LockRevokedError;
  override readonly name = 'LockRevokedError';
  readonly reason = 'revoked';

  constructor(
    readonly path: string,
    /** The lock node whose holder is asked to release. */
    readonly node: string,
  ) {
    super('LockRevoked', `Lock ${path}: its holder is asked to release it (revoked)`);
  }
}

/**
 * The reason a lease's signal aborts with when it is released rather than lost (named
 * `AbortError`, as aborts are).
 */
export class LeaseReleasedError extends ZkrxError<'LeaseReleased'> {
  protected static override readonly marker = '@zkrx/lock.LeaseReleasedError';
  declare static readonly isInstance: (value: unknown) => value is LeaseReleasedError;
  override readonly name = 'AbortError';

  constructor(readonly path: string) {
    super('LeaseReleased', `Lease on ${path} released`);
  }
}
