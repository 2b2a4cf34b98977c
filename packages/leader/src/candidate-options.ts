/**
 * What every candidate is given: its id and suspended policy, checked like any lock's options,
 * and the two recipes elections stand in (latch and selector layouts).
 */
import { hostname } from 'node:os';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import type { SuspendedPolicy } from '@zkrx/lock';
import { defineLockRecipe, exclusiveRule, Marker, resolveLockOptions } from '@zkrx/lock/recipe';

export interface CandidateOptions {
  /** This participant's id, stored as its node's data (default `hostname:pid`). */
  id?: string;
  /**
   * While the connection is suspended leadership is uncertain: `release` (default) gives it up
   * at once, so at most one leader works at any instant; `continue` keeps it until the session
   * is known to be lost (fewer leader changes on network blips, a window of two leaders).
   */
  onSuspended?: SuspendedPolicy;
  /**
   * A name for this election in telemetry: its OpenTelemetry metrics then carry
   * `zkrx.lock.name` and the election's path. Unnamed, only its kind (paths often hold ids; each
   * distinct attribute set is a time series). Use a small, fixed set of names.
   */
  name?: string;
}

/** Curator LeaderLatch layout: `_c_<uuid>-latch-<seq>`. */
export const latch = defineLockRecipe({
  name: 'leader-latch',
  marker: Marker.latch,
  decide: exclusiveRule,
});
/** Curator LeaderSelector layout: a mutex on the path (`_c_<uuid>-lock-<seq>`). */
export const selector = defineLockRecipe({
  name: 'leader-selector',
  marker: Marker.lock,
  decide: exclusiveRule,
});

const defaultId = `${hostname()}:${process.pid}`;

/** Checks a candidate's options like any lock's (path, policy, client); the id is the node data. */
export function resolveCandidate(
  client: unknown,
  path: unknown,
  options: CandidateOptions | undefined,
) {
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
    { onSuspended: options?.onSuspended, data: id, name: options?.name },
    'leader election',
  );
  return { id, onSuspended: options?.onSuspended ?? 'release', name: options?.name };
}
