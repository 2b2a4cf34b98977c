/**
 * ZkError, the one error every ZooKeeper call fails with: a `code` mirroring ZooKeeper's
 * KeeperException codes (plus zkrx's own input and lifecycle codes) and `isRetryable`.
 */
import { ZkrxError, type ZkrxErrorOptions } from './zkrx-error';

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
  /** A transaction (`multi`) op after the one that failed: it was not applied. */
  RuntimeInconsistency: 'RuntimeInconsistency',
  /** The server found its data inconsistent. */
  DataInconsistency: 'DataInconsistency',
  /** A frame or record could not be encoded or decoded (a malformed or oversized frame). */
  MarshallingError: 'MarshallingError',
  /** A write reached a read-only server (`canBeReadOnly`). */
  NotReadOnly: 'NotReadOnly',
  /**
   * A reply was larger than the client's `maxFrameBytes`: that call failed (its reply was read
   * and dropped); the connection and the session are fine. Raise `maxFrameBytes` to read it.
   */
  ReplyTooLarge: 'ReplyTooLarge',
  /** `removeWatches` found no such watch. */
  NoWatcher: 'NoWatcher',
  /** An ephemeral node on a local session (servers with local sessions). */
  EphemeralOnLocalSession: 'EphemeralOnLocalSession',
  /** The server gave up on the request within its own limit. */
  RequestTimeout: 'RequestTimeout',
  /** A quota set on the path was exceeded (servers enforcing quotas). */
  QuotaExceeded: 'QuotaExceeded',
  /** Reconfiguration is disabled on the server. */
  ReconfigDisabled: 'ReconfigDisabled',
  /** The server closed the session: it requires SASL authentication this client lacks. */
  SessionClosedRequireAuth: 'SessionClosedRequireAuth',
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

/**
 * Return codes: ZooKeeper's KeeperException codes, which the server sends in every reply header
 * and which Apache's C client returns with the same numbers (plus a few of its own, marked).
 * Both transports speak them; {@link errorFromRc} turns one into a ZkError.
 */
export const Rc = {
  ok: 0,
  /**
   * zkrx only, never on the wire: the call failed with the ZkError passed as the reply's cause
   * (a transaction op that failed, a reply over `maxFrameBytes`).
   */
  failedWithCause: 1,
  systemError: -1,
  runtimeInconsistency: -2,
  dataInconsistency: -3,
  connectionLoss: -4,
  marshallingError: -5,
  unimplemented: -6,
  operationTimeout: -7,
  badArguments: -8,
  /** C client only: the handle is in no state to take the call. */
  invalidState: -9,
  newConfigNoQuorum: -13,
  reconfigInProgress: -14,
  noNode: -101,
  noAuth: -102,
  badVersion: -103,
  noChildrenForEphemerals: -108,
  nodeExists: -110,
  notEmpty: -111,
  sessionExpired: -112,
  invalidCallback: -113,
  invalidAcl: -114,
  authFailed: -115,
  /** C client only (and the TypeScript transport): the handle is closing or closed. */
  closing: -116,
  sessionMoved: -118,
  notReadOnly: -119,
  ephemeralOnLocalSession: -120,
  noWatcher: -121,
  requestTimeout: -122,
  reconfigDisabled: -123,
  sessionClosedRequireSaslAuth: -124,
  quotaExceeded: -125,
  throttled: -127,
} as const;

// The one table from return codes to zkrx codes, for both transports.
const codeOfRc: ReadonlyMap<number, ZkErrorCode> = new Map<number, ZkErrorCode>([
  [Rc.runtimeInconsistency, ZkErrorCode.RuntimeInconsistency],
  [Rc.dataInconsistency, ZkErrorCode.DataInconsistency],
  [Rc.connectionLoss, ZkErrorCode.ConnectionLoss],
  [Rc.marshallingError, ZkErrorCode.MarshallingError],
  [Rc.unimplemented, ZkErrorCode.Unimplemented],
  [Rc.operationTimeout, ZkErrorCode.OperationTimeout],
  [Rc.badArguments, ZkErrorCode.BadArguments],
  [Rc.noNode, ZkErrorCode.NoNode],
  [Rc.noAuth, ZkErrorCode.NoAuth],
  [Rc.badVersion, ZkErrorCode.BadVersion],
  [Rc.noChildrenForEphemerals, ZkErrorCode.NoChildrenForEphemerals],
  [Rc.nodeExists, ZkErrorCode.NodeExists],
  [Rc.notEmpty, ZkErrorCode.NotEmpty],
  [Rc.sessionExpired, ZkErrorCode.SessionExpired],
  [Rc.invalidAcl, ZkErrorCode.InvalidAcl],
  [Rc.authFailed, ZkErrorCode.AuthFailed],
  [Rc.sessionMoved, ZkErrorCode.SessionMoved],
  [Rc.notReadOnly, ZkErrorCode.NotReadOnly],
  [Rc.ephemeralOnLocalSession, ZkErrorCode.EphemeralOnLocalSession],
  [Rc.noWatcher, ZkErrorCode.NoWatcher],
  [Rc.requestTimeout, ZkErrorCode.RequestTimeout],
  [Rc.reconfigDisabled, ZkErrorCode.ReconfigDisabled],
  [Rc.sessionClosedRequireSaslAuth, ZkErrorCode.SessionClosedRequireAuth],
  [Rc.quotaExceeded, ZkErrorCode.QuotaExceeded],
  [Rc.throttled, ZkErrorCode.Throttled],
]);

/** The zkrx code of a return code (`SystemError` for one zkrx does not know). */
export function codeOfReturnCode(rc: number): ZkErrorCode {
  return codeOfRc.get(rc) ?? ZkErrorCode.SystemError;
}

export interface ZkErrorOptions extends ZkrxErrorOptions {
  path?: string;
  rc?: number;
  /** For a transaction: the index of the op that failed. */
  opIndex?: number;
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
 *   if (ZkError.isInstance(error) && error.code === 'NoNode') console.log('already gone');
 * }
 * // Output: already gone
 * ```
 */
export class ZkError extends ZkrxError<ZkErrorCode> {
  protected static override readonly marker: string = '@zkrx/core.ZkError';
  /**
   * True for a ZkError from any copy of @zkrx/core loaded in the process (its ESM and CommonJS
   * builds are two copies): what zkrx's packages check, never `instanceof` alone. `instanceof
   * ZkError` answers the same.
   */
  declare static readonly isInstance: (value: unknown) => value is ZkError;

  override readonly name: string = 'ZkError';
  readonly path: string | undefined;
  /** The return code (ZooKeeper's KeeperException code) the error came from, if any. */
  readonly rc: number | undefined;
  /** For a failed transaction (`multi`): the index of the op that failed (none was applied). */
  readonly opIndex: number | undefined;

  constructor(code: ZkErrorCode, message: string, options: ZkErrorOptions = {}) {
    super(code, message, options);
    this.path = options.path;
    this.rc = options.rc;
    this.opIndex = options.opIndex;
  }

  /** True when the same call may succeed if tried again (the connection was lost, not the session). */
  get isRetryable(): boolean {
    return retryableCodes.has(this.code);
  }
}

/**
 * True for a return code that says the connection or the session failed, not the call: what a
 * watch waits out (it reads again once connected, on the same session or a new one).
 */
export function isTransientRc(rc: number): boolean {
  return (
    rc === Rc.connectionLoss ||
    rc === Rc.operationTimeout ||
    rc === Rc.closing ||
    rc === Rc.sessionExpired ||
    rc === Rc.sessionMoved ||
    rc === Rc.marshallingError
  );
}

/**
 * Makes an error without capturing a stack trace. For the errors a call fails with when its
 * reply (or the loss of its connection) comes: they are made in the socket's callback, where the
 * stack names only the client's own frames, never the caller's, and capturing it was the largest
 * single cost of a connection lost under thousands of requests (each rejected at once). The
 * error is the same otherwise: its class, `code`, `message` and `cause` (and `stack` holds its
 * first line).
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The ZkError for a return code (the server's, or the C client's). */
export function errorFromRc(rc: number, operation: string, path?: string): ZkError {
  const code = codeOfReturnCode(rc);
  const where = path === undefined ? '' : ` ${path}`;
  return new ZkError(code, `${operation}${where}: ${code} (rc ${rc})`, { path, rc });
}

/** True when `error` is a ZkError with one of `codes`. */
export function isZkError(error: unknown, ...codes: ZkErrorCode[]): error is ZkError {
  return ZkError.isInstance(error) && (codes.length === 0 || codes.includes(error.code));
}

/**
 * A call given up because its `signal` aborted (as `fetch` gives up): `name` `AbortError`,
 * `code` `Aborted`, and `cause` the signal's reason. `sent` says whether the request had gone
 * to the server by then: a write that was sent may still be applied (its outcome is unknown);
 * one that was not sent never will be.
 *
 * ## Example
 * ```ts
 * try {
 *   await client.promises.get('/config', { signal: AbortSignal.timeout(100) });
 * } catch (error) {
 *   if (ZkAbortError.isInstance(error)) console.log(error.name, error.sent);
 * }
 * // Output: AbortError false
 * ```
 */
export class ZkAbortError extends ZkError {
  protected static override readonly marker: string = '@zkrx/core.ZkAbortError';
  /** True for a ZkAbortError from any copy of @zkrx/core loaded in the process. */
  declare static readonly isInstance: (value: unknown) => value is ZkAbortError;

  override readonly name = 'AbortError';
  /** The request had gone to the server: a write may still be applied. */
  readonly sent: boolean;

  constructor(operation: string, path: string | undefined, sent: boolean, reason: unknown) {
    const where = path === undefined ? '' : ` ${path}`;
    super(
      ZkErrorCode.Aborted,
      sent
        ? `${operation}${where}: aborted after the request was sent: it may still be applied`
        : `${operation}${where}: aborted before the request was sent: not applied`,
      { path, cause: reason },
    );
    this.sent = sent;
  }
}
