/**
 * The errors of the fleet recipes: a member id already in use, and why a member's ownership of
 * an item ended. Each has a stable `code` and a static `isInstance` that recognises it across
 * copies of the package (its ESM and CommonJS builds); `instanceof` answers the same.
 */
import { errorIdentity } from '@zkrx/core';
import type { LockLostReason } from '@zkrx/lock';

const duplicateIdentity = errorIdentity('@zkrx/fleet.DuplicateMemberError');

/**
 * Another live member already has this id (its node `<path>/<id>` belongs to another session):
 * ids are unique within a membership. Nothing was created; the other member is not disturbed.
 */
export class DuplicateMemberError extends Error {
  override readonly name = 'DuplicateMemberError';
  readonly code = 'DuplicateMember';
  constructor(
    /** The membership path (a partition's is `<path>/members`). */
    readonly path: string,
    /** The id asked for. */
    readonly id: string,
    /** The session that has it (hex; `0` for a persistent node someone made there). */
    readonly sessionId: string,
  ) {
    super(
      `Member id ${JSON.stringify(id)} is taken at ${path} (by session 0x${sessionId}): give each member its own id`,
    );
    duplicateIdentity.mark(this);
  }

  /** True for a DuplicateMemberError from any copy of @zkrx/fleet in the process. */
  static isInstance(value: unknown): value is DuplicateMemberError {
    return duplicateIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return duplicateIdentity.is(value);
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

const endedIdentity = errorIdentity('@zkrx/fleet.OwnershipEndedError');

/**
 * The reason an owned item's `signal` aborts with: this member no longer owns the item — stop
 * the work on it. After `moved`, `removed`, `left` and `closed` the item's lock is released only
 * once the runs given to `owned.track(run)` have settled; after a loss it is gone already.
 */
export class OwnershipEndedError extends Error {
  override readonly name = 'OwnershipEndedError';
  readonly code = 'OwnershipEnded';
  constructor(
    /** The partition path. */
    readonly path: string,
    /** The item no longer owned. */
    readonly item: string,
    /** Why: see {@link OwnershipEndedReason}. */
    readonly reason: OwnershipEndedReason,
    options?: { cause?: unknown },
  ) {
    super(`Item ${JSON.stringify(item)} of ${path} no longer owned: ${reason}`, options);
    endedIdentity.mark(this);
  }

  /** True for an OwnershipEndedError from any copy of @zkrx/fleet in the process. */
  static isInstance(value: unknown): value is OwnershipEndedError {
    return endedIdentity.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return endedIdentity.is(value);
  }
}
