/**
 * Transactions (ZooKeeper's `multi`): op builders, the checks run before sending, and the
 * mapping of the server's per-op results to one outcome — every op applied, or none.
 */

import { errorFromRc, Rc, ZkError, ZkErrorCode } from '../errors/errors';
import type { TransportOp, TransportOpResult } from '../transport/transport';
import type { Acl } from '../znode/acl';
import { MAX_DATA_BYTES, toDataBuffer, validatePath, type ZkData } from '../znode/paths';
import type { Stat } from '../znode/stat';
import {
  type CreateOptions,
  createHeaderBytes,
  requestSize,
  resolveCreate,
  validateVersion,
} from './create-options';

/** One op of a transaction, as the {@link op} builders make it. */
export type TransactionOp =
  | {
      readonly type: 'create';
      readonly path: string;
      readonly data?: ZkData;
      readonly options?: Omit<CreateOptions, 'parents'>;
    }
  | { readonly type: 'delete'; readonly path: string; readonly version?: number }
  | {
      readonly type: 'set';
      readonly path: string;
      readonly data: ZkData;
      readonly version?: number;
    }
  | { readonly type: 'check'; readonly path: string; readonly version?: number };

/**
 * What each op of a committed transaction did, in the order of the ops. A create's `stat` comes
 * from servers that return it in a transaction (ZooKeeper 3.9+); 3.8 and older give the path only.
 */
export type TransactionResult =
  | { readonly type: 'create'; readonly path: string; readonly stat: Stat | undefined }
  | { readonly type: 'delete' }
  | { readonly type: 'set'; readonly stat: Stat }
  | { readonly type: 'check' };

/**
 * Builders of transaction ops for `client.promises.multi` (and `client.multi`).
 *
 * ## Example
 * ```ts
 * import { op } from '@zkrx/core';
 * const [created] = await client.promises.multi([
 *   op.check('/jobs', 3), // only if /jobs is still at version 3
 *   op.create('/jobs/job-', 'payload', { sequential: true }),
 *   op.set('/jobs', 'updated', 3),
 * ]);
 * console.log(created.path);
 * // Output: /jobs/job-0000000007
 * ```
 */
export const op = {
  /** Creates a node (every mode of `create`, but not `parents`). */
  create(path: string, data?: ZkData, options?: Omit<CreateOptions, 'parents'>): TransactionOp {
    return { type: 'create', path, data, options };
  },
  /** Deletes a node (at `version`, if given). */
  delete(path: string, version?: number): TransactionOp {
    return { type: 'delete', path, version };
  },
  /** Writes a node's data (at `version`, if given). */
  set(path: string, data: ZkData, version?: number): TransactionOp {
    return { type: 'set', path, data, version };
  },
  /** Requires the node to exist, at `version` if given; changes nothing. */
  check(path: string, version?: number): TransactionOp {
    return { type: 'check', path, version };
  },
} as const;

/** Bytes of a MultiHeader (type, done, err). */
const MULTI_HEADER = 9;

/**
 * Checks every op and turns them into what a transport sends; throws ZkError `BadArguments` or
 * `InvalidPath` naming the op's index.
 */
export function resolveTransaction(
  ops: unknown,
  chroot: string,
  defaultAcl: readonly Acl[] | undefined,
): TransportOp[] {
  if (!Array.isArray(ops)) {
    throw new ZkError(ZkErrorCode.BadArguments, 'multi: ops must be an array of op.* builders');
  }
  let size = 8 + MULTI_HEADER;
  const resolved = ops.map((entry: TransactionOp, index): TransportOp => {
    try {
      const path = (entry as { path?: unknown })?.path;
      switch (entry?.type) {
        case 'create': {
          const request = resolveCreate(entry.path, entry.data, entry.options);
          const acl = request.acl ?? defaultAcl;
          size += MULTI_HEADER - 8;
          size += requestSize(
            chroot + request.path,
            request.data,
            createHeaderBytes(
              acl ?? [{ permissions: 31, scheme: 'world', id: 'anyone' }],
              request.ttlMs,
            ),
          );
          return {
            type: 'create',
            path: request.path,
            data: request.data,
            flags: request.flags,
            ttlMs: request.ttlMs,
            acl,
          };
        }
        case 'delete':
        case 'check': {
          validatePath(path);
          if (entry.type === 'delete' && path === '/') {
            throw new ZkError(
              ZkErrorCode.InvalidPath,
              'Invalid path "/": the root cannot be deleted',
              {
                path: '/',
              },
            );
          }
          const version = validateVersion(entry.version, entry.path);
          size += MULTI_HEADER + 4 + Buffer.byteLength(chroot + entry.path) + 4;
          return { type: entry.type, path: entry.path, version };
        }
        case 'set': {
          validatePath(path);
          const data = toDataBuffer(entry.data, entry.path);
          const version = validateVersion(entry.version, entry.path);
          size += MULTI_HEADER - 8 + requestSize(chroot + entry.path, data, 8 + 4);
          return { type: 'set', path: entry.path, data, version };
        }
        default:
          throw new ZkError(
            ZkErrorCode.BadArguments,
            `expected an op from op.create/delete/set/check, got ${JSON.stringify(entry)}`,
          );
      }
    } catch (error) {
      if (ZkError.isInstance(error)) {
        throw new ZkError(error.code, `multi: op ${index}: ${error.message}`, {
          path: error.path,
          opIndex: index,
          cause: error,
        });
      }
      throw error;
    }
  });
  if (size > MAX_DATA_BYTES) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `multi: the request is ${size} bytes, more than ZooKeeper's limit of ${MAX_DATA_BYTES} (jute.maxbuffer)`,
    );
  }
  return resolved;
}

/**
 * The outcome of a transaction from the server's results: every result, or the ZkError of the
 * op that failed (its code, its path and `opIndex`).
 */
export function transactionOutcome(
  ops: readonly TransportOp[],
  results: readonly TransportOpResult[],
): TransactionResult[] | ZkError {
  const failed = results.findIndex(
    (result) =>
      result.type === 'error' && result.rc !== Rc.ok && result.rc !== Rc.runtimeInconsistency,
  );
  if (failed !== -1) {
    const result = results[failed] as { rc: number };
    const failedOp = ops[failed];
    const error = errorFromRc(result.rc, `multi: op ${failed} (${failedOp?.type})`, failedOp?.path);
    return new ZkError(error.code, `${error.message}; no op was applied`, {
      path: failedOp?.path,
      rc: result.rc,
      opIndex: failed,
    });
  }
  const committed: TransactionResult[] = [];
  for (const result of results) {
    if (result.type === 'error') break;
    committed.push(result);
  }
  if (committed.length !== ops.length || results.length !== ops.length) {
    return new ZkError(
      ZkErrorCode.SystemError,
      `multi: the server answered ${results.length} results for ${ops.length} ops`,
    );
  }
  return committed;
}
