/**
 * What every candidate is given — its id, suspended policy and telemetry name, checked like any
 * lock's options — and, for `joinElection`, how it rides out a failure.
 */
import { hostname } from 'node:os';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import type { SuspendedPolicy } from '@zkrx/lock';
import { resolveLockOptions, validateTimeout } from '@zkrx/lock/recipe';

export interface CandidateOptions {
  /** This participant's id, stored as its node's data (default `hostname:pid`). */
  id?: string;
  /**
   * While the connection is suspended leadership is uncertain: `release` (default) gives it up
   * at once, so at most one leader works at any instant; `continue` keeps it until the servers
   * could be about to expire the session (a session timeout, less a sixth of it, after the last
   * request they answered was sent) — fewer leader changes on network blips; a leader works on
   * only while its session surely lives.
   */
  onSuspended?: SuspendedPolicy;
  /**
   * A name for this election in telemetry: its OpenTelemetry metrics then carry
   * `zkrx.lock.name` and the election's path. Unnamed, only its kind (paths often hold ids; each
   * distinct attribute set is a time series). Use a small, fixed set of names.
   */
  name?: string;
}

/** The options of `joinElection`. */
export interface ElectionOptions extends CandidateOptions {
  /**
   * After a failure the candidacy cannot ride out by itself — its first node could not be queued
   * (ZooKeeper unreachable, NoAuth), or the election errored (a LockConflictError) — stand again
   * after this many milliseconds, and so on until `leave()` or the client closes. Default 1000,
   * as `joinPartition`'s: a joined handle stands until left. (A lost leadership is not a
   * failure: the candidate always stands again after one, at once.)
   */
  retryDelayMs?: number;
}

/** A candidate's options once checked. */
export interface ResolvedCandidate {
  readonly id: string;
  readonly onSuspended: SuspendedPolicy;
  readonly name: string | undefined;
  readonly retryDelayMs: number | undefined;
}

const defaultId = `${hostname()}:${process.pid}`;

/** How long `joinElection` waits before standing again after a failure, by default. */
export const DEFAULT_RETRY_DELAY_MS = 1_000;

/**
 * Checks a candidate's options like any lock's (path, policy, client); the id is the node data.
 * Throws ZkError `BadArguments` / `InvalidPath` on bad input.
 */
export function resolveCandidate(
  client: unknown,
  path: unknown,
  options: ElectionOptions | undefined,
): ResolvedCandidate {
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
  return {
    id,
    onSuspended: options?.onSuspended ?? 'release',
    name: options?.name,
    retryDelayMs: validateTimeout(options?.retryDelayMs, 'retryDelayMs'),
  };
}
