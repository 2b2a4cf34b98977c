/**
 * The errors of the fleet recipes: a member id already in use, and why a member's ownership of
 * an item ended. Each is a ZkrxError (@zkrx/core's base) with a stable `code` and a static
 * `isInstance` that recognises it across copies of the package (its ESM and CommonJS builds), as
 * `instanceof` does.
 */
import { ZkrxError, type ZkrxErrorOptions } from '@zkrx/core';
import type { LockLostReason } from '@zkrx/lock';

/**
 * Another live member already has this id (its node `<path>/<id>` belongs to another session):
 * ids are unique within a membership. Nothing was created; the other member is not disturbed.
 */
export class DuplicateMemberError extends ZkrxError<'DuplicateMember'> {
  protected static override readonly marker = '@zkrx/fleet.DuplicateMemberError';
  declare static readonly isInstance: (value: unknown) => value is DuplicateMemberError;
  override readonly name = 'DuplicateMemberError';

  constructor(
    /** The membership path (a partition's is `<path>/members`). */
    readonly path: string,
    /** The id asked for. */
    readonly id: string,
    /** The session that has it (hex; `0` for a persistent node someone made there). */
    readonly sessionId: string,
  ) {
    super(
      'DuplicateMember',
      `Member id ${JSON.stringify(id)} is taken at ${path} (by session 0x${sessionId}): give each member its own id`,
    );
  }
}

/**
 * Why a member stopped owning an item:
 *
 * - `moved`: the assignment gives it to another member (a member joined, or this one is over
 *   its quota); given up cooperatively, before its lock is released.
 * - `removed`: the item left the item set.
 * - `left`: the partition was unsubscribed (this member left).
 * - `closed`: the client was closed.
 * - `session-expired`, `suspended`, `node-deleted`: the item's lock was lost (see @zkrx/lock's
 *   `LockLostError`, which is the `cause`).
 */
export type OwnershipEndedReason = 'moved' | 'removed' | 'left' | 'closed' | LockLostReason;

/**
 * The reason an owned item's `signal` aborts with: this member no longer owns the item — stop
 * the work on it. After `moved`, `removed`, `left` and `closed` the item's lock is released only
 * once the runs given to `owned.track(run)` have settled; after a loss it is gone already.
 */
export class OwnershipEndedError extends ZkrxError<'OwnershipEnded'> {
  protected static override readonly marker = '@zkrx/fleet.OwnershipEndedError';
  declare static readonly isInstance: (value: unknown) => value is OwnershipEndedError;
  override readonly name = 'OwnershipEndedError';

  constructor(
    /** The partition path. */
    readonly path: string,
    /** The item no longer owned. */
    readonly item: string,
    /** Why: see {@link OwnershipEndedReason}. */
    readonly reason: OwnershipEndedReason,
    options?: ZkrxErrorOptions,
  ) {
    super(
      'OwnershipEnded',
      `Item ${JSON.stringify(item)} of ${path} no longer owned: ${reason}`,
      options,
    );
  }
}

/**
 * A member gave an item up and the runs tracked on it (`owned.track(run)`) had not settled
 * `releaseTimeoutMs` later: the item's lock was released anyway (a run must not pin its item for
 * ever) and the member left the fleet, as a Kafka consumer that exceeds `max.poll.interval.ms`
 * leaves its group. The run may still be going: only the fencing token keeps its writes out.
 */
export class ReleaseTimeoutError extends ZkrxError<'ReleaseTimeout'> {
  protected static override readonly marker = '@zkrx/fleet.ReleaseTimeoutError';
  declare static readonly isInstance: (value: unknown) => value is ReleaseTimeoutError;
  override readonly name = 'ReleaseTimeoutError';

  constructor(
    /** The partition path. */
    readonly path: string,
    /** The item whose runs did not settle. */
    readonly item: string,
    /** How long it waited: the partition's `releaseTimeoutMs`. */
    readonly waitedMs: number,
  ) {
    super(
      'ReleaseTimeout',
      `Item ${JSON.stringify(item)} of ${path}: the runs tracked on it had not settled ${waitedMs} ms after it was given up (releaseTimeoutMs); its lock was released and the member left`,
    );
  }
}
