/**
 * The checks every fleet call makes before anything is sent: the client, the path, member ids,
 * item names and options. Each failure is a ZkError `InvalidPath` or `BadArguments` naming the
 * problem.
 */
import { joinPath, toDataBuffer, ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import type { SuspendedPolicy } from '@zkrx/lock';
import { validateLockPath, validateTimeout } from '@zkrx/lock/recipe';
import { isObservable, type Observable } from 'rxjs';
import type { PartitionProblemError } from './errors';
import { checkItemSet, checkName, type ItemSet } from './item-set';

export { checkName };

/** A ZkClient from any copy of @zkrx/core (its brand, `ZkClient.isInstance`). */
export function checkClient(client: unknown, what: string): ZkClient {
  if (!ZkClient.isInstance(client)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: expected a ZkClient from @zkrx/core's createClient`,
    );
  }
  return client;
}

/** A fleet path: a valid path, not the root, not inside a lock's node (items are locks under it). */
export function checkFleetPath(path: unknown, what: string): string {
  return validateLockPath(path, what);
}

/** The member's node data: text, or nothing (empty). */
export function checkData(data: unknown, path: string, what: string): Buffer {
  if (data !== undefined && typeof data !== 'string') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: data must be a string, got ${data === null ? 'null' : typeof data}`,
    );
  }
  return toDataBuffer(data, path);
}

export function checkOptionsObject(options: unknown, what: string): Record<string, unknown> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: options must be an object with the member's id ({ id: 'worker-1' })`,
    );
  }
  return options as Record<string, unknown>;
}

/** An optional yes/no option: `false` when not given. */
export function checkFlag(value: unknown, field: string, what: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: ${field} must be true or false`);
  }
  return value;
}

/** An optional callback: undefined when not given. */
export function checkCallback<T>(value: unknown, field: string, what: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: ${field} must be a function`);
  }
  return value as T;
}

export function checkSuspendedPolicy(value: unknown, what: string): SuspendedPolicy {
  const policy = value ?? 'release';
  if (policy !== 'release' && policy !== 'continue') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: onSuspended must be 'release' or 'continue', got ${String(value)}`,
    );
  }
  return policy;
}

/** Where a partition keeps its members. */
export function membersPath(path: string): string {
  return `${path}/members`;
}

/** Where a partition's members queue to coordinate: a mutex, its holder the coordinator. */
export function coordinatorPath(path: string): string {
  return `${path}/coordinator`;
}

/** Where the coordinator writes each member's share: `<path>/assignments/<id>`. */
export function assignmentsPath(path: string): string {
  return `${path}/assignments`;
}

/** Where a partition's members report the items whose lock failed for good. */
export function poisonPath(path: string): string {
  return `${path}/poison`;
}

/** Where a partition keeps its items' locks. */
export function itemsPath(path: string): string {
  return `${path}/items`;
}

/** The lock path of one item. */
export function itemPath(path: string, item: string): string {
  return `${path}/items/${item}`;
}

/** Checks everything but the client; the checked arguments. */
export function checkPartitionArguments(path: unknown, items: unknown, options: unknown) {
  const what = 'partition';
  const fleetPath = checkFleetPath(path, what);
  const given = checkOptionsObject(options, what);
  const id = checkName(given.id, 'id', what);
  const data = checkData(given.data, joinPath(membersPath(fleetPath), id), what);
  if (data.length > MAX_MEMBER_DATA_BYTES) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: data is ${data.length} bytes: a partition member's data takes at most ${MAX_MEMBER_DATA_BYTES} (its node also states its item set and problems, within ZooKeeper's 1 MB)`,
    );
  }
  const onSuspended = checkSuspendedPolicy(given.onSuspended, what);
  const releaseTimeoutMs =
    validateTimeout(given.releaseTimeoutMs, 'releaseTimeoutMs') ?? DEFAULT_RELEASE_TIMEOUT_MS;
  const onError = checkCallback<(error: PartitionProblemError) => void>(
    given.onError,
    'onError',
    what,
  );
  const source = isObservable(items)
    ? (items as Observable<readonly string[]>)
    : checkItemSet(items, fleetPath, what);
  return { path: fleetPath, id, data, onSuspended, releaseTimeoutMs, onError, items: source };
}

export function resolvePartition(
  client: unknown,
  path: unknown,
  items: unknown,
  options: unknown,
): ResolvedPartition {
  return {
    client: checkClient(client, 'partition'),
    ...checkPartitionArguments(path, items, options),
  };
}

/**
 * The checks `partition` makes before anything is sent, for checking a configuration up front
 * (the adapters do when their middleware or service is set up): the path, the options, and
 * `items` when it is an array (an observable's sets are checked as they come).
 *
 * ## Example
 * ```ts
 * validatePartition('/fleet/shards', ['s0', 's0'], { id: 'worker-1' });
 * // throws ZkError BadArguments: partition: items has "s0" twice: give each item once
 * ```
 *
 * @param path The partition's path.
 * @param items The items, or an observable of the set.
 * @param options The options `partition` would be given.
 * @return Nothing; throws ZkError `InvalidPath` or `BadArguments` as `partition` would error.
 */
export function validatePartition(
  path: string,
  items: readonly string[] | Observable<readonly string[]>,
  options: PartitionOptions,
): void {
  checkPartitionArguments(path, items, options);
}

/** This member of a partition: its id, what it shows the others, its suspended policy. */
export interface PartitionOptions {
  /** This member's id: unique among the partition's live members; becomes a znode's name. */
  id: string;
  /** Shown to the other members and by `zkrx members` / `zkrx partitions`: an address, a host. */
  data?: string;
  /**
   * While the connection is suspended ownership is uncertain: `release` (default) gives every
   * item up at once (signals abort with reason `suspended`), so at most one member works on an
   * item at any instant; `continue` keeps them until the session is known lost — fewer moves on
   * network blips, at the price of a window (up to a session timeout) with two owners if the
   * session did expire.
   */
  onSuspended?: SuspendedPolicy;
  /**
   * How long an item given up waits for the runs tracked on it (`owned.track(run)`) before its
   * lock is released anyway: a run that ignores its signal must not pin the item for ever. Past
   * it the member leaves the fleet with `ReleaseTimeoutError` (the observable errors; from then
   * on only the fencing token keeps that run's writes out). Default 60,000.
   */
  releaseTimeoutMs?: number;
  /**
   * Told of each problem the member goes on through — a `PartitionProblemError` saying what
   * could not be done (a poison report not written, the coordinator's assignment not written,
   * its watch on the poison reports failed) — each retried by the partition, which keeps working
   * on everything else. What ends the partition is the observable's error, not this. The member
   * also shows its open problems on its node (`inspectFleet`: `problems`).
   */
  onError?: (error: PartitionProblemError) => void;
}

/** The most bytes of `data` a partition member shows (an address, a host name: not a payload). */
export const MAX_MEMBER_DATA_BYTES = 65_536;

/** How long a given-up item waits for its tracked runs by default (ms). */
export const DEFAULT_RELEASE_TIMEOUT_MS = 60_000;

export interface ResolvedPartition {
  readonly client: ZkClient;
  readonly path: string;
  readonly id: string;
  readonly data: Buffer;
  readonly onSuspended: SuspendedPolicy;
  readonly releaseTimeoutMs: number;
  readonly onError: ((error: PartitionProblemError) => void) | undefined;
  /** The set checked (shared by the members of this process given the same array), or its source. */
  readonly items: ItemSet | Observable<readonly string[]>;
}
