/**
 * What every lock takes: its options (`LockOptions`), checked once into `ResolvedLockOptions`
 * before anything is sent — a typed error for each bad input — and the checks of a lock path and
 * a timeout the other recipes and the adapters share.
 */
import { hostname } from 'node:os';
import {
  toDataBuffer,
  validatePath,
  ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import type { SuspendedPolicy } from './hold';
import { isRecipeNodeName } from './lock-children';

export interface LockOptions {
  /** Give up after this long with LockTimeoutError (nothing is left in ZooKeeper). Default: wait. */
  timeoutMs?: number;
  /** Abort to give up waiting (rejects with the signal's reason; nothing is left in ZooKeeper). */
  signal?: AbortSignal;
  /**
   * While the connection is suspended ownership is uncertain: `release` (default) treats it as
   * lost at once (LockLostError `suspended`), so at most one holder works at any instant;
   * `continue` keeps the lease (state `suspended`) until the servers could be about to expire
   * its session — a session timeout, less a sixth of it, after the last request they answered
   * was sent (`client.sessionSurvivesMs`) — or until it expires; back to `held` once reconnected
   * to a read-write server and its node is found still ours. A read-only server confirms
   * nothing: the lease stays `suspended` there.
   */
  onSuspended?: SuspendedPolicy;
  /** Re-acquiring in an async context that holds the lock re-enters it (default true). */
  reentrant?: boolean;
  /** The lock node's data (default `hostname:pid`, shown by tools listing holders). */
  data?: ZkData;
  /** Called with our lock node's path each time it joins the queue, before any wait. */
  onQueued?: (node: string) => void;
  /**
   * Let others ask this holder to release (`requestRevoke`, or Curator's `Revoker`): the lease
   * then emits `revoked$` and aborts `signal` with LockRevokedError, and stays held until
   * released — the holder decides when. Default false: such requests are ignored.
   */
  revocable?: boolean;
  /**
   * A name for this lock in telemetry: the OpenTelemetry metrics and spans then carry
   * `zkrx.lock.name` and the lock's path (`zkrx.lock.path`). Unnamed, they carry neither — lock
   * paths often hold ids, and each distinct attribute set is a time series — only the kind.
   * Give names from a small, fixed set (`'orders'`, not `'order-' + id`).
   */
  name?: string;
}

/** The default lock node data: who holds it. */
export const defaultLockData = `${hostname()}:${process.pid}`;

export interface ResolvedLockOptions {
  readonly client: ZkClient;
  readonly path: string;
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly onSuspended: SuspendedPolicy;
  readonly reentrant: boolean;
  readonly data: Buffer;
  readonly onQueued: ((node: string) => void) | undefined;
  readonly revocable: boolean;
  /** The lock's name in telemetry (`LockOptions.name`). */
  readonly name: string | undefined;
}

/**
 * Lock paths found valid lately: a service takes the same few locks over and over, and each
 * check walks the path and tests every segment against two patterns. Bounded: emptied when full.
 */
const validLockPaths = new Set<string>();
const VALID_LOCK_PATHS_KEPT = 1024;

/**
 * Checks a lock path: a valid ZooKeeper path, not the root, not inside another recipe's node.
 * Throws ZkError `InvalidPath` naming the problem.
 */
export function validateLockPath(path: unknown, what = 'lock'): string {
  if (typeof path === 'string' && validLockPaths.has(path)) return path;
  const valid = validatePath(path);
  if (valid === '/') {
    throw new ZkError(
      ZkErrorCode.InvalidPath,
      `Invalid ${what} path "/": the root cannot be a ${what}`,
      {
        path: valid,
      },
    );
  }
  for (const segment of valid.split('/')) {
    if (isRecipeNodeName(segment)) {
      throw new ZkError(
        ZkErrorCode.InvalidPath,
        `Invalid ${what} path ${JSON.stringify(valid)}: "${segment}" is another recipe's node (lock nodes have no children)`,
        { path: valid },
      );
    }
  }
  if (validLockPaths.size >= VALID_LOCK_PATHS_KEPT) validLockPaths.clear();
  validLockPaths.add(valid);
  return valid;
}

/** Checks a timeout: a finite number of milliseconds >= 0, or undefined. */
export function validateTimeout(value: unknown, name = 'timeoutMs'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${name} must be a finite number of milliseconds >= 0, got ${String(value)}`,
    );
  }
  return value;
}

/** Validates the common options; throws ZkError `BadArguments`/`InvalidPath` on bad input. */
export function resolveLockOptions(
  client: unknown,
  path: unknown,
  options: LockOptions | undefined,
  what = 'lock',
): ResolvedLockOptions {
  if (!ZkClient.isInstance(client)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: expected a ZkClient from @zkrx/core's createClient`,
    );
  }
  const valid = validateLockPath(path, what);
  const given = options ?? {};
  if (typeof given !== 'object')
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: options must be an object`);
  const onSuspended = given.onSuspended ?? 'release';
  if (onSuspended !== 'release' && onSuspended !== 'continue') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: onSuspended must be 'release' or 'continue', got ${String(onSuspended)}`,
    );
  }
  const reentrant = given.reentrant ?? true;
  if (typeof reentrant !== 'boolean') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: reentrant must be a boolean`);
  }
  const signal = given.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: signal must be an AbortSignal`);
  }
  if (given.onQueued !== undefined && typeof given.onQueued !== 'function') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: onQueued must be a function`);
  }
  const revocable = given.revocable ?? false;
  if (typeof revocable !== 'boolean') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: revocable must be a boolean`);
  }
  const name = given.name;
  if (name !== undefined && (typeof name !== 'string' || name.length === 0)) {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: name must be a non-empty string`);
  }
  return {
    client,
    path: valid,
    timeoutMs: validateTimeout(given.timeoutMs),
    signal,
    onSuspended,
    reentrant,
    data: toDataBuffer(given.data === undefined ? defaultLockData : given.data, valid),
    onQueued: given.onQueued,
    revocable,
    name,
  };
}
