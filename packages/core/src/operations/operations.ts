/**
 * Every ZooKeeper operation of the client, defined once: its checks before anything is sent,
 * whether it may be sent again after a lost connection, its name on the wire, and how its request
 * is encoded and its reply decoded. The client, the protocol session and the native transport
 * all read this table.
 */
import { CONFIG_NODE } from '../ensemble/ensemble-config';
import { ZkError, ZkErrorCode } from '../errors/errors';
import type { OperationName, OperationRequest, OperationResult } from '../transport/transport';
import { AddWatchMode, OpCode, WatcherType, WatchRegistration } from '../wire/codes';
import type { JuteReader } from '../wire/jute';
import {
  encodeCreate,
  encodeHeaderOnly,
  encodeMulti,
  encodePath,
  encodePathInt,
  encodePathWatch,
  encodeSetAcl,
  encodeSetData,
  type MultiOp,
  readAclAndStat,
  readChildrenAndStat,
  readClientInfos,
  readCreated,
  readInt,
  readMultiResults,
  readNodeData,
  readStat,
  readStrings,
} from '../wire/records';
import { type Acl, OPEN_ACL_UNSAFE } from '../znode/acl';
import { toDataBuffer, validatePath, type ZkData } from '../znode/paths';
import {
  bad,
  type CreateOptions,
  checkRequestSize,
  createHeaderBytes,
  resolveCreate,
  validateAcl,
  validateVersion,
} from './create-options';
import { resolveTransaction, type TransactionOp } from './transaction';

/** What the user gives each operation the client exposes (before it is checked). */
export interface OperationInputs {
  create: { readonly path: string; readonly data?: ZkData; readonly options?: CreateOptions };
  get: { readonly path: string };
  exists: { readonly path: string };
  children: { readonly path: string };
  set: { readonly path: string; readonly data: ZkData; readonly version?: number };
  delete: { readonly path: string; readonly version?: number };
  sync: { readonly path: string };
  getAcl: { readonly path: string };
  setAcl: { readonly path: string; readonly acl: readonly Acl[]; readonly version?: number };
  multi: { readonly ops: readonly TransactionOp[] };
  getAllChildrenNumber: { readonly path: string };
  getEphemerals: { readonly path: string };
  whoAmI: Readonly<Record<string, never>>;
  getConfig: Readonly<Record<string, never>>;
  addWatch: OperationRequest<'addWatch'>;
  removeWatches: OperationRequest<'removeWatches'>;
}

/** What the checks of an operation know about the client. */
export interface OperationContext {
  /** The connect string's chroot (`''` without one): the server sees it before every path. */
  readonly chroot: string;
  /** The client's `defaultAcl`, for creates that name none. */
  readonly defaultAcl: readonly Acl[] | undefined;
}

/** Client paths to server paths and back (the chroot). */
export interface PathMap {
  toServer(path: string): string;
  /** Undefined for a server path outside the chroot. */
  fromServer(path: string): string | undefined;
}

/** One operation, as the table defines it. */
export interface Operation<N extends OperationName> {
  /** ZooKeeper's name for it (`getData` for `get`): telemetry's `db.operation.name`. */
  readonly wireName: string;
  /**
   * Checks what the user gave and turns it into the request; throws ZkError `InvalidPath` or
   * `BadArguments` (before anything is sent).
   */
  prepare(input: OperationInputs[N], context: OperationContext): OperationRequest<N>;
  /** Safe to send again after a lost connection (a write with a version is not: BadVersion). */
  idempotent(request: OperationRequest<N>): boolean;
  /** The path the call is about, for errors and telemetry (none for whoAmI, getConfig, multi). */
  path(request: OperationRequest<N>): string | undefined;
  /** The whole frame, its RequestHeader with `xid` included; paths as the server sees them. */
  encode(xid: number, request: OperationRequest<N>, paths: PathMap): Buffer;
  /** The reply's record after the ReplyHeader (none for a reply with no record). */
  decode?(reader: JuteReader, paths: PathMap): OperationResult<N>;
  /**
   * A read that may go in one multiRead with others of its turn (a `get` without a watch,
   * protocol/read-batch.ts): its server path; undefined for one that may not.
   */
  batchPath?(request: OperationRequest<N>, paths: PathMap): string | undefined;
  /** The watch a successful reply leaves on the server (server path). */
  watch?(
    request: OperationRequest<N>,
    paths: PathMap,
  ): { kind: number; path: string; removes?: number };
}

const yes = () => true;
const no = () => false;
const pathOf = (request: { readonly path: string }) => request.path;
const noPath = () => undefined;
// A write without a version is idempotent; with one, a retry could report BadVersion wrongly.
const unversioned = (request: { readonly version: number }) => request.version === -1;

function checkedPath(path: string): { path: string } {
  return { path: validatePath(path) };
}

/** A read of one path that leaves a watch when asked: `get`, `exists`, `children`. */
function watchableRead<N extends 'get' | 'exists' | 'children'>(
  wireName: string,
  opCode: number,
  decode: (reader: JuteReader) => OperationResult<N>,
  registration: number,
  batchable = false,
): Operation<N> {
  return {
    wireName,
    prepare: ({ path }) => ({ ...checkedPath(path), watch: false }),
    idempotent: yes,
    path: pathOf,
    encode: (xid, request, paths) =>
      encodePathWatch(xid, opCode, paths.toServer(request.path), request.watch),
    decode,
    batchPath: batchable
      ? (request, paths) => (request.watch ? undefined : paths.toServer(request.path))
      : undefined,
    watch: (request, paths) => ({
      kind: request.watch ? registration : WatchRegistration.none,
      path: paths.toServer(request.path),
    }),
  };
}

/**
 * A write to one node answered with its new Stat (`set`, `setAcl`): idempotent only without a
 * version. `encode` is given the path as the server sees it.
 */
function statWrite<N extends 'set' | 'setAcl'>(
  wireName: string,
  prepare: Operation<N>['prepare'],
  encode: (xid: number, serverPath: string, request: OperationRequest<N>) => Buffer,
): Operation<N> {
  return {
    wireName,
    prepare,
    idempotent: unversioned,
    path: pathOf,
    encode: (xid, request, paths) => encode(xid, paths.toServer(request.path), request),
    decode: readStat,
  };
}

/** An operation that sends one path and nothing else: `sync`, `getAcl`, ... */
function pathOnly<N extends 'sync' | 'getAcl' | 'getAllChildrenNumber' | 'getEphemerals'>(
  wireName: string,
  opCode: number,
  decode?: (reader: JuteReader, paths: PathMap) => OperationResult<N>,
): Operation<N> {
  return {
    wireName,
    prepare: ({ path }) => checkedPath(path),
    idempotent: yes,
    path: pathOf,
    encode: (xid, request, paths) => encodePath(xid, opCode, paths.toServer(request.path)),
    decode,
  };
}

function serverOps(ops: OperationRequest<'multi'>['ops'], paths: PathMap): MultiOp[] {
  return ops.map((op): MultiOp => {
    const path = paths.toServer(op.path);
    switch (op.type) {
      case 'create':
        return {
          type: 'create',
          path,
          data: op.data,
          acl: op.acl ?? OPEN_ACL_UNSAFE,
          flags: op.flags,
          ttlMs: op.ttlMs,
        };
      case 'set':
        return { type: 'set', path, data: op.data, version: op.version };
      default:
        return { type: op.type, path, version: op.version };
    }
  });
}

/** The table: one entry per operation. */
export const operations: { readonly [N in OperationName]: Operation<N> } = {
  create: {
    wireName: 'create',
    prepare({ path, data, options }, context) {
      const request = resolveCreate(path, data, options);
      const acl = request.acl ?? context.defaultAcl;
      checkRequestSize(
        'create',
        path,
        context.chroot + path,
        request.data,
        createHeaderBytes(acl ?? OPEN_ACL_UNSAFE, request.ttlMs),
      );
      return { path, data: request.data, flags: request.flags, ttlMs: request.ttlMs, acl };
    },
    // A sequential create made twice makes two nodes; a plain one answers NodeExists.
    idempotent: no,
    path: pathOf,
    encode: (xid, request, paths) =>
      encodeCreate(
        xid,
        paths.toServer(request.path),
        request.data,
        request.acl ?? OPEN_ACL_UNSAFE,
        request.flags,
        request.ttlMs,
      ),
    decode: readCreated,
  },
  get: watchableRead('getData', OpCode.getData, readNodeData, WatchRegistration.data, true),
  exists: watchableRead('exists', OpCode.exists, readStat, WatchRegistration.exists),
  children: watchableRead(
    'getChildren',
    OpCode.getChildren2,
    readChildrenAndStat,
    WatchRegistration.child,
  ),
  set: statWrite(
    'setData',
    ({ path, data, version }, context) => {
      validatePath(path);
      const bytes = toDataBuffer(data, path);
      const expected = validateVersion(version, path);
      checkRequestSize('set', path, context.chroot + path, bytes, 8 + 4); // xid+type, version
      return { path, data: bytes, version: expected };
    },
    (xid, path, request) => encodeSetData(xid, path, request.data, request.version),
  ),
  delete: {
    wireName: 'delete',
    prepare({ path, version }) {
      validatePath(path);
      if (path === '/') {
        throw new ZkError(ZkErrorCode.InvalidPath, 'Invalid path "/": the root cannot be deleted', {
          path,
        });
      }
      return { path, version: validateVersion(version, path) };
    },
    // Sent again after a lost connection, NoNode means done (the client says so).
    idempotent: yes,
    path: pathOf,
    encode: (xid, request, paths) =>
      encodePathInt(xid, OpCode.delete, paths.toServer(request.path), request.version),
  },
  sync: pathOnly('sync', OpCode.sync),
  getAcl: pathOnly('getACL', OpCode.getACL, readAclAndStat),
  setAcl: statWrite(
    'setACL',
    ({ path, acl, version }) => {
      validatePath(path);
      const checked = validateAcl(acl, path);
      return { path, acl: checked, version: validateVersion(version, path) };
    },
    (xid, path, request) => encodeSetAcl(xid, path, request.acl, request.version),
  ),
  multi: {
    wireName: 'multi',
    prepare: ({ ops }, context) => ({
      ops: resolveTransaction(ops, context.chroot, context.defaultAcl),
    }),
    // Writes, made once: a transaction sent again could apply twice or fail wrongly.
    idempotent: no,
    path: noPath,
    encode: (xid, request, paths) => encodeMulti(xid, serverOps(request.ops, paths)),
    decode: (reader, paths) =>
      readMultiResults(reader).map((result) =>
        result.type === 'create'
          ? { ...result, path: paths.fromServer(result.path) ?? result.path }
          : result,
      ),
  },
  getAllChildrenNumber: pathOnly('getAllChildrenNumber', OpCode.getAllChildrenNumber, readInt),
  getEphemerals: pathOnly('getEphemerals', OpCode.getEphemerals, (reader, paths) => {
    const own: string[] = [];
    for (const path of readStrings(reader)) {
      const client = paths.fromServer(path);
      if (client !== undefined) own.push(client);
    }
    return own;
  }),
  whoAmI: {
    wireName: 'whoAmI',
    prepare: () => ({}),
    idempotent: yes,
    path: noPath,
    encode: (xid) => encodeHeaderOnly(xid, OpCode.whoAmI),
    decode: readClientInfos,
  },
  getConfig: {
    wireName: 'getData',
    prepare: () => ({ watch: false }),
    idempotent: yes,
    path: noPath,
    encode: (xid, request) => encodePathWatch(xid, OpCode.getData, CONFIG_NODE, request.watch),
    decode: readNodeData,
    watch: (request) => ({
      kind: request.watch ? WatchRegistration.data : WatchRegistration.none,
      path: CONFIG_NODE,
    }),
  },
  addWatch: {
    wireName: 'addWatch',
    prepare(request) {
      validatePath(request.path);
      if (request.mode !== 'persistent' && request.mode !== 'persistent-recursive') {
        throw bad(`addWatch ${request.path}: unknown mode ${String(request.mode)}`, request.path);
      }
      return request;
    },
    idempotent: yes,
    path: pathOf,
    encode: (xid, request, paths) =>
      encodePathInt(
        xid,
        OpCode.addWatch,
        paths.toServer(request.path),
        request.mode === 'persistent-recursive'
          ? AddWatchMode.persistentRecursive
          : AddWatchMode.persistent,
      ),
    watch: (request, paths) => ({
      kind:
        request.mode === 'persistent-recursive'
          ? WatchRegistration.persistentRecursive
          : WatchRegistration.persistent,
      path: paths.toServer(request.path),
    }),
  },
  removeWatches: {
    wireName: 'removeWatches',
    prepare(request) {
      validatePath(request.path);
      if (!Object.values(WatcherType).includes(request.type as never)) {
        throw bad(`removeWatches ${request.path}: unknown watcher type ${request.type}`);
      }
      return request;
    },
    idempotent: yes,
    path: pathOf,
    encode: (xid, request, paths) =>
      encodePathInt(xid, OpCode.removeWatches, paths.toServer(request.path), request.type),
    watch: (request, paths) => ({
      kind: WatchRegistration.remove,
      path: paths.toServer(request.path),
      removes: request.type,
    }),
  },
};
