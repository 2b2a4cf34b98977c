/**
 * The checks every write runs before anything is sent: create modes and their flags, ACLs,
 * versions, and the size of the request against ZooKeeper's `jute.maxbuffer`.
 */
import { ZkError, ZkErrorCode } from '../errors/errors';
import { CreateFlag } from '../wire/codes';
import type { Acl } from '../znode/acl';
import { MAX_DATA_BYTES, toDataBuffer, validatePath, type ZkData } from '../znode/paths';

/** How a node lives: until deleted, until its session ends, or until its last child goes. */
export type CreateMode = 'persistent' | 'ephemeral' | 'container';

export interface CreateOptions {
  /** Gives the call up when it aborts (a `ZkAbortError` says whether the create was sent). */
  signal?: AbortSignal;
  /** Default `persistent`. */
  mode?: CreateMode;
  /** Let the server append a 10-digit sequence number to the name. */
  sequential?: boolean;
  /** Persistent nodes only: the server deletes the node once unchanged and childless this long. */
  ttlMs?: number;
  /** The node's ACL (default: the client's `defaultAcl`, else open). */
  acl?: readonly Acl[];
  /** Create missing parents first, as `persistent` or `container` nodes. */
  parents?: 'persistent' | 'container';
}

export interface MkdirpOptions {
  /** Gives the walk up when it aborts (nodes made before stay). */
  signal?: AbortSignal;
  /** Mode of the nodes created. Default `persistent`. */
  mode?: 'persistent' | 'container';
  acl?: readonly Acl[];
}

/** A create, checked: its flags (ZooKeeper's CreateMode), data and ACL. */
export interface CreateRequest {
  readonly path: string;
  readonly data: Buffer;
  readonly flags: number;
  /** -1 for none. */
  readonly ttlMs: number;
  readonly acl: readonly Acl[] | undefined;
  readonly parents: 'persistent' | 'container' | undefined;
}

const MAX_TTL_MS = 0xff_ffff_ffff;
const createModes: readonly CreateMode[] = ['persistent', 'ephemeral', 'container'];

export function bad(message: string, path?: string): ZkError {
  return new ZkError(ZkErrorCode.BadArguments, message, { path });
}

/** Checks a create's path and options and turns them into ZooKeeper's flags. */
export function resolveCreate(
  path: string,
  data: ZkData,
  options: CreateOptions = {},
): CreateRequest {
  if (typeof options !== 'object' || options === null)
    throw bad(`create ${path}: options must be an object`, path);
  const mode = options.mode ?? 'persistent';
  if (!createModes.includes(mode)) {
    throw bad(
      `create ${path}: mode must be one of ${createModes.join(', ')}, got ${String(mode)}`,
      path,
    );
  }
  const sequential = options.sequential ?? false;
  if (typeof sequential !== 'boolean')
    throw bad(`create ${path}: sequential must be a boolean`, path);
  validatePath(path, { sequential });
  if (path === '/')
    throw new ZkError(ZkErrorCode.InvalidPath, 'Invalid path "/": the root always exists', {
      path,
    });
  if (mode === 'container' && sequential)
    throw bad(`create ${path}: a container node cannot be sequential`, path);
  const ttlMs = options.ttlMs;
  if (ttlMs !== undefined) {
    if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_TTL_MS) {
      throw bad(
        `create ${path}: ttlMs must be a positive integer up to ${MAX_TTL_MS}, got ${String(ttlMs)}`,
        path,
      );
    }
    if (mode !== 'persistent')
      throw bad(`create ${path}: ttlMs needs mode 'persistent', got '${mode}'`, path);
  }
  const parents = options.parents;
  if (parents !== undefined && parents !== 'persistent' && parents !== 'container') {
    throw bad(
      `create ${path}: parents must be 'persistent' or 'container', got ${String(parents)}`,
      path,
    );
  }
  let flags: number;
  if (ttlMs !== undefined)
    flags = sequential ? CreateFlag.persistentSequentialWithTtl : CreateFlag.persistentWithTtl;
  else if (mode === 'container') flags = CreateFlag.container;
  else if (mode === 'ephemeral')
    flags = sequential ? CreateFlag.ephemeralSequential : CreateFlag.ephemeral;
  else flags = sequential ? CreateFlag.persistentSequential : CreateFlag.persistent;
  return {
    path,
    data: toDataBuffer(data, path),
    flags,
    ttlMs: ttlMs ?? -1,
    acl: options.acl === undefined ? undefined : validateAcl(options.acl, path),
    parents,
  };
}

export function validateAcl(acl: unknown, path: string): readonly Acl[] {
  if (!Array.isArray(acl) || acl.length === 0) {
    throw bad(`Invalid ACL for ${path}: expected a non-empty array`, path);
  }
  for (const entry of acl as Acl[]) {
    if (
      typeof entry?.scheme !== 'string' ||
      typeof entry.id !== 'string' ||
      !Number.isInteger(entry.permissions) ||
      entry.permissions < 0 ||
      entry.permissions > 31
    ) {
      throw bad(
        `Invalid ACL entry for ${path}: ${JSON.stringify(entry)} (expected { permissions: 0..31, scheme, id })`,
        path,
      );
    }
  }
  return acl as Acl[];
}

/** A version argument: an integer >= -1 (-1 and undefined: any version). */
export function validateVersion(version: unknown, path: string): number {
  if (version === undefined) return -1;
  if (
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < -1 ||
    version > 2 ** 31 - 1
  ) {
    throw bad(
      `Invalid version for ${path}: expected an integer >= -1, got ${String(version)}`,
      path,
    );
  }
  return version;
}

/**
 * Rejects a request larger than the server's default `jute.maxbuffer` before it is sent: the
 * server answers one by dropping the connection, which the caller would see as ConnectionLoss
 * (and an idempotent `set` would retry into a reconnect loop). Sizes are jute's encoding:
 * `headerBytes` counts everything but the path and the data (each with its 4-byte length).
 */
export function checkRequestSize(
  operation: string,
  path: string,
  serverPath: string,
  data: Buffer,
  headerBytes: number,
): void {
  const size = requestSize(serverPath, data, headerBytes);
  if (size > MAX_DATA_BYTES) {
    throw bad(
      `${operation} ${path}: the request is ${size} bytes (${data.length} of data), more than ZooKeeper's limit of ${MAX_DATA_BYTES} (jute.maxbuffer)`,
      path,
    );
  }
}

/** Jute size of a request: its header and fields, path and data with their lengths. */
export function requestSize(serverPath: string, data: Buffer, headerBytes: number): number {
  return headerBytes + 4 + Buffer.byteLength(serverPath) + 4 + data.length;
}

/** Jute size of a create's ACL list, flags and TTL (request header included). */
export function createHeaderBytes(acl: readonly Acl[], ttlMs: number): number {
  let bytes = 8 + 4 + 4 + (ttlMs > 0 ? 8 : 0); // xid+type, ACL count, flags, TTL
  for (const entry of acl) {
    bytes += 4 + 4 + Buffer.byteLength(entry.scheme) + 4 + Buffer.byteLength(entry.id);
  }
  return bytes;
}
