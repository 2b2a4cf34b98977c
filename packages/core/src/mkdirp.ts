/**
 * The client's recipes over plain calls: `mkdirp` (a path and every missing parent) and
 * `create` with `parents`.
 */
import type { Acl } from './acl';
import type { CallRunner } from './call-runner';
import { bad, type CreateOptions, type MkdirpOptions, validateAcl } from './create-options';
import { Rc, ZkError, ZkErrorCode } from './errors';
import { parentOf, validatePath, type ZkData } from './paths';
import type { Created } from './transport';

/** How many times `mkdirp` walks the path again after a parent vanished under it. */
const MKDIRP_ATTEMPTS = 10;
/** How many times a create with `parents` makes them again after they vanished under it. */
const PARENTS_ATTEMPTS = 5;

const isNoNode = (error: unknown) => ZkError.isInstance(error) && error.code === ZkErrorCode.NoNode;

/**
 * Creates `path` and every missing parent (existing nodes are fine), as `persistent` or
 * `container` nodes.
 */
export async function mkdirp(
  runner: CallRunner,
  path: string,
  options: MkdirpOptions = {},
): Promise<void> {
  validatePath(path);
  const mode = options.mode ?? 'persistent';
  if (mode !== 'persistent' && mode !== 'container') {
    throw bad(
      `mkdirp ${path}: mode must be 'persistent' or 'container', got ${String(mode)}`,
      path,
    );
  }
  if (options.acl !== undefined) validateAcl(options.acl, path);
  if (path === '/') return;
  const segments = path.split('/').slice(1);
  // ZooKeeper reaps an empty container: one made here, or found here, can go before its child
  // is made (NoNode). Walk again then; a few times, as a reaper that keeps winning is a bug.
  for (let attempt = 1; ; attempt++) {
    try {
      await walk(runner, segments, mode, options.acl, options.signal);
      return;
    } catch (error) {
      if (!isNoNode(error) || attempt >= MKDIRP_ATTEMPTS) throw error;
    }
  }
}

async function walk(
  runner: CallRunner,
  segments: readonly string[],
  mode: 'persistent' | 'container',
  acl: readonly Acl[] | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  // Fast path: most of the time only the last segments are missing.
  let missingFrom = segments.length;
  while (missingFrom > 0) {
    const prefix = `/${segments.slice(0, missingFrom).join('/')}`;
    const found = await runner.run(
      'exists',
      { path: prefix },
      { signal, outcome: (rc, stat) => (rc === Rc.noNode ? { rc: Rc.ok } : { rc, value: stat }) },
    );
    if (found) break;
    missingFrom -= 1;
  }
  for (let index = missingFrom; index < segments.length; index++) {
    const prefix = `/${segments.slice(0, index + 1).join('/')}`;
    // A create of a fixed path is safe to send again: NodeExists after a lost connection
    // means done — and NodeExists at all means someone made it, which is fine here.
    await runner.run(
      'create',
      { path: prefix, options: { mode, acl } },
      {
        signal,
        idempotent: true,
        outcome: (rc) => (rc === Rc.nodeExists ? { rc: Rc.ok } : { rc }),
      },
    );
  }
}

/** A create, then (with `parents`) its missing parents and the create again if it said NoNode. */
export async function createWithParents(
  runner: CallRunner,
  path: string,
  data: ZkData,
  options: CreateOptions | undefined,
): Promise<Created> {
  const signal = options?.signal;
  const parents = options?.parents;
  try {
    return await runner.run('create', { path, data, options }, { signal });
  } catch (error) {
    if (!parents || !isNoNode(error)) throw error;
    // A container parent can vanish again before our create lands: try a few times.
    let lastError: unknown = error;
    for (let tries = 0; tries < PARENTS_ATTEMPTS; tries++) {
      await mkdirp(runner, parentOf(path), { mode: parents, acl: options?.acl, signal });
      try {
        return await runner.run('create', { path, data, options }, { signal });
      } catch (retryError) {
        lastError = retryError;
        if (!isNoNode(retryError)) throw retryError;
      }
    }
    throw lastError;
  }
}
