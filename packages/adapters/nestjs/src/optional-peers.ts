/**
 * The peers only some features need — @zkrx/rwlock (`@Locked` read and write locks),
 * @zkrx/leader (`@LeaderOnly`, LeaderService) and @zkrx/fleet (FleetService) — loaded when the
 * module starts if installed, so that `@Locked` alone needs no more than @zkrx/core and
 * @zkrx/lock.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';

type Rwlock = typeof import('@zkrx/rwlock');
type Leader = typeof import('@zkrx/leader');
type Fleet = typeof import('@zkrx/fleet');

/** The optional peers found installed (undefined: not installed). */
export interface OptionalPeers {
  readonly rwlock: Rwlock | undefined;
  readonly leader: Leader | undefined;
  readonly fleet: Fleet | undefined;
}

/** `load()`, or undefined when `name` is not installed (any other failure is thrown). */
async function optional<T>(name: string, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    const notFound = code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
    if (notFound && typeof message === 'string' && message.includes(name)) return undefined;
    throw error;
  }
}

let loading: Promise<OptionalPeers> | undefined;

/**
 * Loads the optional peers once per process. The specifiers are literal so that bundlers see
 * them; the CommonJS build turns each `import()` into a `require()` (tsdown.config.ts), so that a
 * CommonJS application shares the copy of @zkrx/lock its own code loads (the lock's async-context
 * re-entrancy lives in it).
 */
export function loadOptionalPeers(): Promise<OptionalPeers> {
  loading ??= Promise.all([
    optional('@zkrx/rwlock', () => import('@zkrx/rwlock')),
    optional('@zkrx/leader', () => import('@zkrx/leader')),
    optional('@zkrx/fleet', () => import('@zkrx/fleet')),
  ]).then(([rwlock, leader, fleet]) => ({ rwlock, leader, fleet }));
  return loading;
}

/** ZkError `BadArguments`: `feature` needs the optional peer `name`, which is not installed. */
export function notInstalled(name: string, feature: string): ZkError {
  return new ZkError(
    ZkErrorCode.BadArguments,
    `${feature} needs ${name}, which is not installed: npm install ${name}`,
  );
}
