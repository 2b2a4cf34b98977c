/**
 * The client's recipes over plain calls: `mkdirp` (a path and every missing parent) and
 * `create` with `parents`.
 */
import { Rc, ZkError, ZkErrorCode } from '../errors/errors';
import {
  bad,
  type CreateOptions,
  type MkdirpOptions,
  validateAcl,
} from '../operations/create-options';
import type { Created } from '../transport/transport';
import type { Acl } from '../znode/acl';
import { parentOf, validatePath, type ZkData } from '../znode/paths';
import type { CallRunner } from './call-runner';

/** How many times `mkdirp` walks the path again after a parent vanished under it. */
const MKDIRP_ATTEMPTS = 10;
/** How many times a create with `parents` makes them again after they vanished under it. */
const PARENTS_ATTEMPTS = 5;

const isNoNode = (error: unknown) => ZkError.isInstance(error) && error.code === ZkErrorCode.NoNode;

/**
 * Creates `path` and every missing parent (existing nodes are fine), as `persistent` or
 * `container` nodes. Settles in the turn its last reply is read (the runner's callbacks, no
 * `await` in between), so its caller continues before a watch event read after that reply.
 */
export function mkdirp(
  runner: CallRunner,
  path: string,
  options: MkdirpOptions = {},
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    try {
      validatePath(path);
    } catch (error) {
      return reject(error);
    }
    const mode = options.mode ?? 'persistent';
    if (mode !== 'persistent' && mode !== 'container') {
      return reject(
        bad(`mkdirp ${path}: mode must be 'persistent' or 'container', got ${String(mode)}`, path),
      );
    }
    try {
      if (options.acl !== undefined) validateAcl(options.acl, path);
    } catch (error) {
      return reject(error);
    }
    if (path === '/') return resolve();
    const segments = path.split('/').slice(1);
    // ZooKeeper reaps an empty container: one made here, or found here, can go before its child
    // is made (NoNode). Walk again then; a few times, as a reaper that keeps winning is a bug.
    const walkFrom = (attempt: number) =>
      walk(runner, segments, mode, options.acl, options.signal, resolve, (error) => {
        if (!isNoNode(error) || attempt >= MKDIRP_ATTEMPTS) reject(error);
        else walkFrom(attempt + 1);
      });
    walkFrom(1);
  });
}

/**
 * One walk: the longest prefix that exists (from the end: most of the time only the last
 * segments are missing), then a create for each segment after it, `done` called from the last
 * reply.
 */
function walk(
  runner: CallRunner,
  segments: readonly string[],
  mode: 'persistent' | 'container',
  acl: readonly Acl[] | undefined,
  signal: AbortSignal | undefined,
  done: () => void,
  failed: (error: unknown) => void,
): void {
  const prefix = (length: number) => `/${segments.slice(0, length).join('/')}`;
  const createFrom = (index: number): void => {
    if (index >= segments.length) return done();
    // A create of a fixed path is safe to send again: NodeExists after a lost connection
    // means done — and NodeExists at all means someone made it, which is fine here.
    runner.runWith(
      'create',
      { path: prefix(index + 1), options: { mode, acl } },
      {
        signal,
        idempotent: true,
        outcome: (rc) => (rc === Rc.nodeExists ? { rc: Rc.ok } : { rc }),
      },
      () => createFrom(index + 1),
      failed,
    );
  };
  const findFrom = (missingFrom: number): void => {
    if (missingFrom === 0) return createFrom(0);
    runner.runWith(
      'exists',
      { path: prefix(missingFrom) },
      { signal, outcome: (rc, stat) => (rc === Rc.noNode ? { rc: Rc.ok } : { rc, value: stat }) },
      (found) => (found ? createFrom(missingFrom) : findFrom(missingFrom - 1)),
      failed,
    );
  };
  findFrom(segments.length);
}

/**
 * A create, then (with `parents`) its missing parents and the create again if it said NoNode.
 * Settles in the turn the reply of its last create is read (see {@link mkdirp}).
 */
export function createWithParents(
  runner: CallRunner,
  path: string,
  data: ZkData,
  options: CreateOptions | undefined,
): Promise<Created> {
  const signal = options?.signal;
  const parents = options?.parents;
  if (!parents) return runner.run('create', { path, data, options }, { signal });
  return new Promise<Created>((resolve, reject) => {
    // A container parent can vanish again before our create lands: try a few times.
    const createAfter = (tries: number, error: unknown): void => {
      if (!isNoNode(error) || tries >= PARENTS_ATTEMPTS) return reject(error);
      mkdirp(runner, parentOf(path), { mode: parents, acl: options?.acl, signal }).then(
        () =>
          runner.runWith('create', { path, data, options }, { signal }, resolve, (retryError) =>
            createAfter(tries + 1, retryError),
          ),
        reject,
      );
    };
    runner.runWith('create', { path, data, options }, { signal }, resolve, (error) =>
      createAfter(0, error),
    );
  });
}
