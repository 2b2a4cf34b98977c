/**
 * ZkError, the one error every zkrx call fails with: a `code` mirroring ZooKeeper's
 * KeeperException codes (plus zkrx's own input and lifecycle codes) and `isRetryable`.
 */

/** Every code a {@link ZkError} can carry, each with what it means for the caller. */
export const ZkErrorCode = {
  /** The connection to the server was lost mid-call: the call may or may not have been applied. */
  ConnectionLoss: 'ConnectionLoss',
  /** The call got no answer in time (the connection is probably being re-established). */
  OperationTimeout: 'OperationTimeout',
  /** The session is gone, and its ephemeral nodes and watches with it. */
  SessionExpired: 'SessionExpired',
  /** The session moved to another server mid-call (ensembles); retrying is safe for reads. */
  SessionMoved: 'SessionMoved',
  /** The node does not exist. */
  NoNode: 'NoNode',
  /** The node already exists. */
  NodeExists: 'NodeExists',
  /** The node's version is not the one the call expected. */
  BadVersion: 'BadVersion',
  /** The node still has children. */
  NotEmpty: 'NotEmpty',
  /** Ephemeral nodes cannot have children. */
  NoChildrenForEphemerals: 'NoChildrenForEphemerals',
  /** The session lacks the permission the node's ACL requires. */
  NoAuth: 'NoAuth',
  /** The ACL is invalid. */
  InvalidAcl: 'InvalidAcl',
  /** Authentication failed: the client can no longer be used. */
  AuthFailed: 'AuthFailed',
  /** The server does not support the call (e.g. TTL nodes without `extendedTypesEnabled`). */
  Unimplemented: 'Unimplemented',
  /** The server is throttling requests. */
  Throttled: 'Throttled',
  /** A path broke ZooKeeper's path rules; checked before any network call. */
  InvalidPath: 'InvalidPath',
  /** An argument (data size, option, mode) is invalid; checked before any network call. */
  BadArguments: 'BadArguments',
  /** The client was closed: no further call can run. */
  ClientClosed: 'ClientClosed',
  /** No connection to ZooKeeper within `connectTimeoutMs`. */
  ConnectTimeout: 'ConnectTimeout',
  /** The caller aborted the call (an AbortSignal fired). */
  Aborted: 'Aborted',
  /** Any other error the server or the C client reported; `rc` tells which. */
  SystemError: 'SystemError',
} as const;

export type ZkErrorCode = (typeof ZkErrorCode)[keyof typeof ZkErrorCode];

const retryableCodes: ReadonlySet<ZkErrorCode> = new Set<ZkErrorCode>([
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
  ZkErrorCode.Throttled,
]);

// The C client's return codes (zookeeper.h) mapped to zkrx codes.
const codeOfRc: ReadonlyMap<number, ZkErrorCode> = new Map<number, ZkErrorCode>([
  [-4, ZkErrorCode.ConnectionLoss],
  [-7, ZkErrorCode.OperationTimeout],
  [-8, ZkErrorCode.BadArguments],
  [-6, ZkErrorCode.Unimplemented],
  [-101, ZkErrorCode.NoNode],
  [-102, ZkErrorCode.NoAuth],
  [-103, ZkErrorCode.BadVersion],
  [-108, ZkErrorCode.NoChildrenForEphemerals],
  [-110, ZkErrorCode.NodeExists],
  [-111, ZkErrorCode.NotEmpty],
  [-112, ZkErrorCode.SessionExpired],
  [-114, ZkErrorCode.InvalidAcl],
  [-115, ZkErrorCode.AuthFailed],
  [-118, ZkErrorCode.SessionMoved],
  [-127, ZkErrorCode.Throttled],
]);

export interface ZkErrorOptions {
  path?: string;
  rc?: number;
  cause?: unknown;
}

/**
 * The error of every failed zkrx call: a stable `code`, the `path` involved, and whether
 * retrying the same call can succeed.
 *
 * ## Example
 * ```ts
 * try {
 *   await client.promises.delete('/jobs/42');
 * } catch (error) {
 *   if (error instanceof ZkError && error.code === 'NoNode') console.log('already gone');
 * }
 * // Output: already gone
 * ```
 */
export class ZkError extends Error {
  override readonly name: string = 'ZkError';
  readonly code: ZkErrorCode;
  readonly path: string | undefined;
  /** The C client's return code, when the error came from it. */
  readonly rc: number | undefined;

  constructor(code: ZkErrorCode, message: string, options: ZkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
    this.rc = options.rc;
  }

  /** True when the same call may succeed if tried again (the connection was lost, not the session). */
  get isRetryable(): boolean {
    return retryableCodes.has(this.code);
  }
}

/** The ZkError for a C client return code. */
export function errorFromRc(rc: number, operation: string, path?: string): ZkError {
  const code = codeOfRc.get(rc) ?? ZkErrorCode.SystemError;
  const where = path === undefined ? '' : ` ${path}`;
  return new ZkError(code, `${operation}${where}: ${code} (rc ${rc})`, { path, rc });
}

/** True when `error` is a ZkError with one of `codes`. */
export function isZkError(error: unknown, ...codes: ZkErrorCode[]): error is ZkError {
  return error instanceof ZkError && (codes.length === 0 || codes.includes(error.code));
}
