/**
 * The options of `createClient`, their defaults, and the checks that turn a bad option into a
 * clear ZkError `BadArguments` before anything connects.
 */
import type { ConnectionOptions } from 'node:tls';
import type { ServerAddress } from '../ensemble/ensemble-config';
import { ZkError, ZkErrorCode } from '../errors/errors';
import type { Logger, LogLevel } from '../transport/logger';
import type { Transport } from '../transport/transport';
import type { Acl } from '../znode/acl';
import { validatePath } from '../znode/paths';
import {
  type ExponentialBackoffOptions,
  exponentialBackoff,
  noRetry,
  type RetryPolicy,
} from './retry';

/** Credentials added to every session (`addauth` in zkCli). */
export interface ZkAuth {
  /** e.g. `digest`. */
  readonly scheme: string;
  /** e.g. `user:password` for digest. */
  readonly credentials: string;
}

export interface ZkClientOptions {
  /** `host:port[,host:port...][/chroot]`. */
  connect: string;
  /** Session timeout asked of the server (it negotiates within its min/max). Default 10 s. */
  sessionTimeoutMs?: number;
  /** `connected()` rejects when no connection comes within this. Default 15 s. */
  connectTimeoutMs?: number;
  /** Retry of idempotent calls after ConnectionLoss: a policy, backoff bounds, or `false`. */
  retry?: RetryPolicy | ExponentialBackoffOptions | false;
  /** Where zkrx and the C client log. Silent when absent. */
  logger?: Logger;
  /** Lowest level written to `logger`. Default `warn`. */
  logLevel?: LogLevel;
  /** Credentials added to every session. */
  auth?: ZkAuth | readonly ZkAuth[];
  /**
   * SASL login on every connection, before any request: DIGEST-MD5 with a user of the servers'
   * JAAS `Server` section. The session then passes ACLs `sasl:<username>`. Default transport only.
   */
  sasl?: ZkSasl;
  /** ACL of nodes created without one. Default: open to anyone. */
  defaultAcl?: readonly Acl[];
  /** How long `close()` waits for work in flight (lease releases) before closing. Default 5 s. */
  closeTimeoutMs?: number;
  /**
   * Connect over TLS (the servers' `secureClientPort`): `true` for Node's defaults (the system's
   * CAs), or `tls.connect` options (`ca`, `cert`, `key`, `servername`, ...). Default transport only.
   */
  tls?: boolean | ConnectionOptions;
  /** Accept a read-only server (one cut off from its quorum): reads work there, writes fail `NotReadOnly`. */
  canBeReadOnly?: boolean;
  /**
   * Largest reply read from a server (a node's data, a children list...). A larger one fails
   * its own call with ZkError `ReplyTooLarge` (not retried: the reply is read and dropped) and
   * nothing else: the connection and the session stay. Default 4 MiB (the Java client's
   * `jute.maxbuffer` is 1 MiB - 1, and it drops the connection instead). TypeScript transport.
   */
  maxFrameBytes?: number;
  /**
   * Send the `get`s without a watch made in one turn of the event loop as one multiRead request
   * (ZooKeeper 3.6+): one request and one reply packet for all of them, each still answered as
   * its own call, in order with everything else the session sends. Default `true`; `false` sends
   * every get alone. Why it reads what the gets sent one by one would read:
   * `protocol/read-batch.ts`. TypeScript transport.
   */
  batchReads?: boolean;
  /**
   * How the connect string's host names become addresses: every address is tried (shuffled),
   * and names are resolved again before each round of attempts. Default: the system's resolver
   * (`dns.lookup` with `all: true`, what `net.connect` uses). Give your own for service
   * discovery, or to pin addresses. TypeScript transport.
   *
   * ## Example
   * ```ts
   * createClient({ connect: 'zk.internal:2181', lookup: async () => ['10.0.0.5', '10.0.0.6'] });
   * ```
   */
  lookup?: (hostname: string) => Promise<readonly string[]> | readonly string[];
  /**
   * Follow the ensemble's dynamic configuration (`/zookeeper/config`, ZooKeeper 3.5+): on each
   * (re)connection and each change of it, after a random wait of up to `maxDelayMs` (1 s by
   * default), the client reads it and connects to the servers it names from then on — their
   * client addresses as written (a name stays a name), the TLS ones for a TLS client, the
   * chroot kept — and rebalances as Apache's Java client does: when servers are added a client
   * moves to one of them with probability 1 − old/new; a client whose server left moves before
   * that server is stopped. A move is planned, with the session known alive: it is never
   * `suspended` unless the move takes longer than its bound, so it ends no lease. The servers
   * followed are `client.ensemble$`. Default `true`; `false` keeps the connect string for good
   * (a load balancer's address, or a DNS name that already moves). `address` maps each server's
   * client address, as the configuration writes it, to where this client reaches it (a NAT, a
   * tunnel, a sidecar proxy); returning undefined leaves that server out.
   */
  followEnsemble?:
    | boolean
    | {
        readonly maxDelayMs?: number;
        readonly address?: (server: ServerAddress) => ServerAddress | undefined;
      };
  /**
   * How the client talks to ZooKeeper: the TypeScript implementation of the wire protocol by
   * default, or `nativeTransport()` from `@zkrx/core/native` (Apache's C client).
   */
  transport?: Transport;
}

/** A SASL login (`sasl` option). */
export interface ZkSasl {
  /** `DIGEST-MD5` (the only mechanism supported). */
  readonly mechanism?: 'DIGEST-MD5';
  readonly username: string;
  readonly password: string;
}

/** The options with every default filled in. */
export interface ResolvedClientOptions {
  readonly connect: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly logger: Logger | undefined;
  readonly logLevel: LogLevel;
  readonly auth: readonly ZkAuth[];
  readonly sasl: { readonly username: string; readonly password: string } | undefined;
  readonly defaultAcl: readonly Acl[] | undefined;
  readonly closeTimeoutMs: number;
  readonly tls: ConnectionOptions | undefined;
  readonly canBeReadOnly: boolean;
  readonly maxFrameBytes: number;
  readonly batchReads: boolean;
  readonly lookup: ZkClientOptions['lookup'];
  readonly followEnsemble: {
    readonly enabled: boolean;
    readonly maxDelayMs: number;
    readonly address: ((server: ServerAddress) => ServerAddress | undefined) | undefined;
  };
  /** Undefined: the default (TypeScript) transport. */
  readonly transport: Transport | undefined;
}

/** The default of `followEnsemble.maxDelayMs`. */
export const DEFAULT_FOLLOW_DELAY_MS = 1_000;

function resolveFollow(
  follow: ZkClientOptions['followEnsemble'],
): ResolvedClientOptions['followEnsemble'] {
  if (follow === undefined || follow === true) {
    return { enabled: true, maxDelayMs: DEFAULT_FOLLOW_DELAY_MS, address: undefined };
  }
  if (follow === false) {
    return { enabled: false, maxDelayMs: DEFAULT_FOLLOW_DELAY_MS, address: undefined };
  }
  if (typeof follow !== 'object' || follow === null || Array.isArray(follow)) {
    throw bad(
      `followEnsemble must be true, false or { maxDelayMs, address }, got ${String(follow)}`,
    );
  }
  if (follow.address !== undefined && typeof follow.address !== 'function') {
    throw bad('followEnsemble.address must be a function (server) => server or undefined');
  }
  const maxDelayMs = follow.maxDelayMs ?? DEFAULT_FOLLOW_DELAY_MS;
  if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < 0) {
    throw bad(
      `followEnsemble.maxDelayMs must be a finite number of milliseconds, 0 or more, got ${String(maxDelayMs)}`,
    );
  }
  return { enabled: true, maxDelayMs, address: follow.address };
}

/** The default of `maxFrameBytes`. */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

const logLevels: readonly LogLevel[] = ['silent', 'error', 'warn', 'info', 'debug'];

function bad(message: string): ZkError {
  return new ZkError(ZkErrorCode.BadArguments, `createClient: ${message}`);
}

function positiveMs(name: string, value: unknown, fallback: number, max = 2 ** 31 - 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max) {
    throw bad(
      `${name} must be a finite number of milliseconds in (0, ${max}], got ${String(value)}`,
    );
  }
  return value;
}

/** Checks a connect string: hosts with ports, and an optional chroot path. */
export function validateConnectString(connect: unknown): string {
  if (typeof connect !== 'string' || connect.trim().length === 0) {
    throw bad(
      `connect must be a non-empty "host:port[,host:port][/chroot]" string, got ${JSON.stringify(connect)}`,
    );
  }
  const slash = connect.indexOf('/');
  const hosts = slash === -1 ? connect : connect.slice(0, slash);
  if (slash !== -1) {
    try {
      validatePath(connect.slice(slash));
    } catch (error) {
      throw bad(`connect has an invalid chroot: ${(error as Error).message}`);
    }
  }
  for (const host of hosts.split(',')) {
    const colon = host.lastIndexOf(':');
    const name = colon === -1 ? host : host.slice(0, colon);
    const port = colon === -1 ? '' : host.slice(colon + 1);
    if (
      name.trim().length === 0 ||
      !/^\d+$/.test(port) ||
      Number(port) < 1 ||
      Number(port) > 65535
    ) {
      throw bad(`connect has an invalid server ${JSON.stringify(host)} (expected host:port)`);
    }
  }
  return connect;
}

function resolveRetry(retry: ZkClientOptions['retry']): RetryPolicy {
  if (retry === undefined) return exponentialBackoff();
  if (retry === false) return noRetry;
  if (typeof retry !== 'object' || retry === null) {
    throw bad(`retry must be a RetryPolicy, backoff options or false, got ${String(retry)}`);
  }
  if ('nextDelayMs' in retry) {
    if (typeof retry.nextDelayMs !== 'function') throw bad('retry.nextDelayMs must be a function');
    return retry;
  }
  const backoff = retry as ExponentialBackoffOptions;
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxElapsedMs'] as const) {
    if (backoff[key] !== undefined) positiveMs(`retry.${key}`, backoff[key], 1);
  }
  if (
    backoff.maxRetries !== undefined &&
    (!Number.isInteger(backoff.maxRetries) || backoff.maxRetries < 0)
  ) {
    throw bad(`retry.maxRetries must be a non-negative integer, got ${String(backoff.maxRetries)}`);
  }
  return exponentialBackoff(backoff);
}

function resolveAuth(auth: ZkClientOptions['auth']): readonly ZkAuth[] {
  if (auth === undefined) return [];
  const list = Array.isArray(auth) ? auth : [auth as ZkAuth];
  for (const entry of list) {
    if (!entry || typeof entry.scheme !== 'string' || entry.scheme.length === 0) {
      throw bad('auth.scheme must be a non-empty string (e.g. "digest")');
    }
    if (typeof entry.credentials !== 'string') throw bad('auth.credentials must be a string');
  }
  return list;
}

function resolveSasl(sasl: ZkClientOptions['sasl']): ResolvedClientOptions['sasl'] {
  if (sasl === undefined) return undefined;
  if (typeof sasl !== 'object' || sasl === null) throw bad('sasl must be { username, password }');
  if (sasl.mechanism !== undefined && sasl.mechanism !== 'DIGEST-MD5') {
    throw bad(`sasl.mechanism must be 'DIGEST-MD5', got ${String(sasl.mechanism)}`);
  }
  if (typeof sasl.username !== 'string' || sasl.username.length === 0) {
    throw bad('sasl.username must be a non-empty string');
  }
  if (typeof sasl.password !== 'string') throw bad('sasl.password must be a string');
  return { username: sasl.username, password: sasl.password };
}

/** Validates options and fills in defaults; throws ZkError `BadArguments` naming the bad option. */
export function resolveClientOptions(options: ZkClientOptions): ResolvedClientOptions {
  if (typeof options !== 'object' || options === null) {
    throw bad('options must be an object with at least { connect }');
  }
  const logLevel = options.logLevel ?? 'warn';
  if (!logLevels.includes(logLevel)) {
    throw bad(`logLevel must be one of ${logLevels.join(', ')}, got ${String(logLevel)}`);
  }
  if (
    options.logger !== undefined &&
    (typeof options.logger !== 'object' || options.logger === null)
  ) {
    throw bad('logger must be an object with debug/info/warn/error methods (console works)');
  }
  if (
    options.defaultAcl !== undefined &&
    (!Array.isArray(options.defaultAcl) || options.defaultAcl.length === 0)
  ) {
    throw bad('defaultAcl must be a non-empty array of ACL entries');
  }
  if (
    options.tls !== undefined &&
    typeof options.tls !== 'boolean' &&
    (typeof options.tls !== 'object' || options.tls === null)
  ) {
    throw bad('tls must be true, false or tls.connect options');
  }
  if (options.canBeReadOnly !== undefined && typeof options.canBeReadOnly !== 'boolean') {
    throw bad('canBeReadOnly must be a boolean');
  }
  if (options.batchReads !== undefined && typeof options.batchReads !== 'boolean') {
    throw bad('batchReads must be a boolean');
  }
  const transport = options.transport;
  if (
    transport !== undefined &&
    (typeof transport !== 'object' || transport === null || typeof transport.open !== 'function')
  ) {
    throw bad('transport must be a Transport (e.g. nativeTransport() from @zkrx/core/native)');
  }
  if (options.lookup !== undefined && typeof options.lookup !== 'function') {
    throw bad('lookup must be a function (hostname) => addresses, or a promise of them');
  }
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 1024 || maxFrameBytes > 2 ** 31 - 1) {
    throw bad(`maxFrameBytes must be an integer of at least 1024, got ${String(maxFrameBytes)}`);
  }
  return {
    connect: validateConnectString(options.connect),
    sessionTimeoutMs: positiveMs('sessionTimeoutMs', options.sessionTimeoutMs, 10_000),
    connectTimeoutMs: positiveMs('connectTimeoutMs', options.connectTimeoutMs, 15_000),
    retry: resolveRetry(options.retry),
    logger: options.logger,
    logLevel,
    auth: resolveAuth(options.auth),
    sasl: resolveSasl(options.sasl),
    defaultAcl: options.defaultAcl,
    closeTimeoutMs: positiveMs('closeTimeoutMs', options.closeTimeoutMs, 5_000),
    tls: options.tls === true ? {} : options.tls === false ? undefined : options.tls,
    canBeReadOnly: options.canBeReadOnly ?? false,
    maxFrameBytes,
    batchReads: options.batchReads ?? true,
    lookup: options.lookup,
    followEnsemble: resolveFollow(options.followEnsemble),
    transport,
  };
}
