/**
 * The errors of the lock recipes: what a caller needs to act on a timeout or a lost lock.
 */

/** Why a held lock was lost. */
export type LockLostReason = 'session-expired' | 'suspended' | 'node-deleted';

/**
 * The lock was held and no longer is (or may no longer be): stop the work it guards.
 *
 * - `session-expired`: the session ended, its lock node with it; another client may hold it.
 * - `suspended`: the connection was lost and the policy is to stop at once (ownership uncertain).
 * - `node-deleted`: the lock node was deleted by someone else.
 */
export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  constructor(
    readonly path: string,
    readonly reason: LockLostReason,
  ) {
    super(`Lock ${path} lost: ${reason}`);
  }
}

/**
 * The lock was not acquired within `timeoutMs`; nothing is left behind in ZooKeeper (the node's
 * removal is under way when this is thrown). When the client was not connected for the whole
 * wait, `cause` is a ZkError saying so: `ConnectTimeout` (never connected) or `ConnectionLoss`
 * (connected at some moment, not at the end) — ZooKeeper unreachable, not a busy lock.
 */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      `Lock ${path} not acquired within ${Math.round(waitedMs)} ms${options?.cause === undefined ? '' : ` (${(options.cause as Error).message ?? String(options.cause)})`}`,
      options,
    );
  }
}

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
    /** What was asked for. */
    readonly kind: string,
    /** What the path's nodes belong to. */
    readonly otherKind: string,
  ) {
    super(
      `Cannot take a ${kind} at ${path}: a ${otherKind} uses that path (its nodes are there). Give each lock its own path.`,
    );
  }
}

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
  }
}
