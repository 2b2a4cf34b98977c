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

/**
 * What a member of a partition could not do and goes on through (each is retried, or set
 * again): `report-poison` (a poison report could not be written), `watch-members` (the
 * coordinator could not watch the membership: nothing new is assigned meanwhile), `watch-poison` (the
 * coordinator's watch on the poison reports failed, or they are too many to list),
 * `write-assignment` (the coordinator could not write a member's assignment node), `store-set`
 * (the member could not store its item set under `<path>/sets`), `read-set` (the coordinator
 * could not read a member's stored set: that member is given nothing new meanwhile). Told to the
 * partition's `onError` and `joinPartition`'s `errors$`, and shown by `inspectFleet` in the
 * member's `problems`.
 */
export type PartitionTask =
  | 'report-poison'
  | 'watch-members'
  | 'watch-poison'
  | 'write-assignment'
  | 'store-set'
  | 'read-set';

/**
 * A problem a member of a partition goes on through (see {@link PartitionTask}): the partition
 * keeps working on everything else and tries again. `cause` is the error met.
 */
export class PartitionProblemError extends ZkrxError<'PartitionProblem'> {
  protected static override readonly marker = '@zkrx/fleet.PartitionProblemError';
  declare static readonly isInstance: (value: unknown) => value is PartitionProblemError;
  override readonly name = 'PartitionProblemError';

  constructor(
    /** The partition path. */
    readonly path: string,
    /** What could not be done. */
    readonly task: PartitionTask,
    /** The item it was about, if one. */
    readonly item: string | undefined,
    options: ZkrxErrorOptions & { readonly detail?: string },
  ) {
    const cause = options.cause as { message?: unknown } | undefined;
    const about = item === undefined ? '' : ` (item ${JSON.stringify(item)})`;
    const what = {
      'report-poison': 'a poison report could not be written',
      'watch-members': 'the members could not be watched',
      'watch-poison': 'the poison reports could not be watched',
      'write-assignment': 'an assignment could not be written',
      'store-set': 'the item set could not be stored',
      'read-set': 'the item set of a member could not be read',
    }[task];
    super(
      'PartitionProblem',
      `Partition ${path}: ${what}${about}: ${options.detail ?? String(cause?.message ?? cause)}; tried again`,
      options,
    );
  }
}

/**
 * What a record keeps of an error: its `code` (`Error` when it has none) and its message, cut
 * to `characters` (a poison report, a member's problem).
 */
export function errorSummary(
  error: unknown,
  characters = 200,
  codeOf: unknown = error,
): { readonly code: string; readonly message: string } {
  const code =
    codeOf !== null && typeof codeOf === 'object' && 'code' in codeOf
      ? String((codeOf as { code: unknown }).code)
      : 'Error';
  const message = (error instanceof Error ? error.message : String(error)).slice(0, characters);
  return { code, message };
}
