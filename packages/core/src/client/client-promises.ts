/**
 * The client's operations as promises (`client.promises`): each one an operation of the table
 * run by the call runner, with what the client makes of the reply, or a recipe.
 */
import { Rc, ZkError } from '../errors/errors';
import type { CreateOptions, MkdirpOptions } from '../operations/create-options';
import {
  type TransactionOp,
  type TransactionResult,
  transactionOutcome,
} from '../operations/transaction';
import type { ClientInfo, Created, NodeData } from '../transport/transport';
import type { Acl } from '../znode/acl';
import type { ZkData } from '../znode/paths';
import type { Stat } from '../znode/stat';
import type { CallOptions, CallRunner, Outcome } from './call-runner';
import { createWithParents, mkdirp } from './mkdirp';

/** A node's children names (sorted) and its metadata, as `childrenWithStat` returns them. */
export interface ChildrenWithStat {
  readonly children: string[];
  readonly stat: Stat;
}

/** Options of the writes that take a version: `set`, `delete`, `setAcl`. */
export interface VersionOptions extends CallOptions {
  /** Only when the node (its data, or its ACL for `setAcl`) is at this version. */
  readonly version?: number;
}

/**
 * The client's operations as promises (what `fs.promises` is to `fs`). Every one takes a
 * `signal` in its options, as `fetch` does: it rejects with a `ZkAbortError` soon after the
 * abort (a write already sent may still be applied, and the error says so).
 */
export interface ZkPromises {
  create(path: string, data?: ZkData, options?: CreateOptions): Promise<Created>;
  get(path: string, options?: CallOptions): Promise<NodeData>;
  /** `options`: the version, or `{ version, signal }`. */
  set(path: string, data: ZkData, options?: number | VersionOptions): Promise<Stat>;
  delete(path: string, options?: number | VersionOptions): Promise<void>;
  exists(path: string, options?: CallOptions): Promise<Stat | null>;
  children(path: string, options?: CallOptions): Promise<string[]>;
  childrenWithStat(path: string, options?: CallOptions): Promise<ChildrenWithStat>;
  mkdirp(path: string, options?: MkdirpOptions): Promise<void>;
  sync(path: string, options?: CallOptions): Promise<void>;
  getAcl(path: string, options?: CallOptions): Promise<{ acl: Acl[]; stat: Stat }>;
  setAcl(path: string, acl: readonly Acl[], options?: number | VersionOptions): Promise<void>;
  multi(ops: readonly TransactionOp[], options?: CallOptions): Promise<TransactionResult[]>;
  getAllChildrenNumber(path: string, options?: CallOptions): Promise<number>;
  getEphemerals(prefix?: string, options?: CallOptions): Promise<string[]>;
  whoAmI(options?: CallOptions): Promise<ClientInfo[]>;
  getConfig(options?: CallOptions): Promise<NodeData>;
}

/** `{ version, signal }` from the version-or-options argument of a versioned write. */
export function versioned(options: number | VersionOptions | undefined): VersionOptions {
  return typeof options === 'object' && options !== null
    ? options
    : { version: options as number | undefined };
}

/** The operations as promises, each through the call runner (and the recipes). */
export function callPromises(runner: CallRunner): ZkPromises {
  return {
    create: (path, data, options) => createWithParents(runner, path, data, options),
    get: (path, options) => runner.run('get', { path }, { signal: options?.signal }),
    set: (path, data, options) => {
      const { version, signal } = versioned(options);
      return runner.run('set', { path, data, version }, { signal });
    },
    delete: (path, options) => {
      const { version, signal } = versioned(options);
      return runner.run(
        'delete',
        { path, version },
        {
          signal,
          // After a lost connection, NoNode means our earlier attempt (or someone) deleted it.
          outcome: (rc, _value, lostBefore) =>
            rc === Rc.noNode && lostBefore ? { rc: Rc.ok } : { rc },
        },
      );
    },
    exists: (path, options) =>
      runner.run(
        'exists',
        { path },
        {
          signal: options?.signal,
          outcome: (rc, stat): Outcome<Stat | null> =>
            rc === Rc.noNode ? { rc: Rc.ok, value: null } : { rc, value: stat },
        },
      ),
    // Names only, or with the Stat: the promise resolves in the reply's turn either way (no
    // `then` in between), so its continuation comes before any watch event read after it.
    children: (path, options) =>
      runner.run(
        'children',
        { path },
        {
          signal: options?.signal,
          outcome: (rc, listing) => ({ rc, value: listing?.children.sort() }),
        },
      ),
    childrenWithStat: (path, options) =>
      runner.run(
        'children',
        { path },
        {
          signal: options?.signal,
          outcome: (rc, listing) => ({
            rc,
            value: listing && { children: listing.children.sort(), stat: listing.stat },
          }),
        },
      ),
    mkdirp: (path, options) => mkdirp(runner, path, options),
    sync: (path, options) => runner.run('sync', { path }, { signal: options?.signal }),
    getAcl: (path, options) => runner.run('getAcl', { path }, { signal: options?.signal }),
    setAcl: (path, acl, options) => {
      const { version, signal } = versioned(options);
      return runner.run(
        'setAcl',
        { path, acl, version },
        { signal, outcome: (rc): Outcome<void> => ({ rc }) },
      );
    },
    multi: (ops, options) =>
      runner.run(
        'multi',
        { ops },
        {
          signal: options?.signal,
          outcome: (rc, results, _lost, request): Outcome<TransactionResult[]> => {
            if (rc !== Rc.ok || !results) return { rc };
            // A failed op is not a return code of the call: the op's own error, as it is.
            const outcome = transactionOutcome(request.ops, results);
            return ZkError.isInstance(outcome)
              ? { rc: Rc.failedWithCause, cause: outcome }
              : { rc: Rc.ok, value: outcome };
          },
        },
      ),
    getAllChildrenNumber: (path, options) =>
      runner.run('getAllChildrenNumber', { path }, { signal: options?.signal }),
    getEphemerals: (prefix = '/', options) =>
      runner.run(
        'getEphemerals',
        { path: prefix },
        { signal: options?.signal, outcome: (rc, paths) => ({ rc, value: paths?.sort() }) },
      ),
    whoAmI: (options) => runner.run('whoAmI', {}, { signal: options?.signal }),
    getConfig: (options) => runner.run('getConfig', {}, { signal: options?.signal }),
  };
}
