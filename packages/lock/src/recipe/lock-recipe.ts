/**
 * A lock recipe from a queue rule: its lease observable, promise API, try-once and the operator
 * running under it, with validation, re-entrancy and clean-up shared by every recipe (mutex, read and
 * write locks, leader election).
 */
import { hostname } from 'node:os';
import {
  toDataBuffer,
  validatePath,
  ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import {
  from,
  type MonoTypeOperatorFunction,
  Observable,
  type ObservableInput,
  type Subscription,
} from 'rxjs';
import { type Lease, retainLease, watchLeaseState } from './lease';
import { heldInContext, LeaseCore, runHolding, type SuspendedPolicy } from './lease-core';
import { isRecipeNodeName } from './node-names';
import { joinQueue, type QueueHold } from './queue';
import type { Decide } from './queue-rules';
import { timedAcquire } from './telemetry';

export interface LockOptions {
  /** Give up after this long with LockTimeoutError (nothing is left in ZooKeeper). Default: wait. */
  timeoutMs?: number;
  /** Abort to give up waiting (rejects with the signal's reason; nothing is left in ZooKeeper). */
  signal?: AbortSignal;
  /**
   * While the connection is suspended ownership is uncertain: `release` (default) treats it as
   * lost at once (LockLostError `suspended`), so at most one holder works at any instant;
   * `continue` keeps the lease (state `suspended`) until the servers could be about to expire
   * its session — a session timeout, less a sixth of it, after the last request they answered
   * was sent (`client.sessionSurvivesMs`) — or until it expires; back to `held` once reconnected
   * to a read-write server and its node is found still ours. A read-only server confirms
   * nothing: the lease stays `suspended` there.
   */
  onSuspended?: SuspendedPolicy;
  /** Re-acquiring in an async context that holds the lock re-enters it (default true). */
  reentrant?: boolean;
  /** The lock node's data (default `hostname:pid`, shown by tools listing holders). */
  data?: ZkData;
  /** Called with our lock node's path each time it joins the queue, before any wait. */
  onQueued?: (node: string) => void;
  /**
   * Let others ask this holder to release (`requestRevoke`, or Curator's `Revoker`): the lease
   * then emits `revoked$` and aborts `signal` with LockRevokedError, and stays held until
   * released — the holder decides when. Default false: such requests are ignored.
   */
  revocable?: boolean;
  /**
   * A name for this lock in telemetry: the OpenTelemetry metrics and spans then carry
   * `zkrx.lock.name` and the lock's path (`zkrx.lock.path`). Unnamed, they carry neither — lock
   * paths often hold ids, and each distinct attribute set is a time series — only the kind.
   * Give names from a small, fixed set (`'orders'`, not `'order-' + id`).
   */
  name?: string;
}

/** The default lock node data: who holds it. */
export const defaultLockData = `${hostname()}:${process.pid}`;

/** What the current async context holds, as a recipe sees it before joining the queue. */
export interface JoinContext {
  readonly client: ZkClient;
  readonly path: string;
  /** This client's live hold by the recipe named `recipe` on this path in the current context. */
  held(recipe: string): LeaseCore | undefined;
}

/** A recipe's rule and how it shares the context with its siblings. */
export interface LockRecipeSpec {
  /**
   * The recipe's name (`mutex`, `read`, `write`, ...): in messages, and the re-entrancy key —
   * holds by one recipe on one path by one client in one async context re-enter.
   */
  readonly name: string;
  /** The node name marker (`lock-`, `__READ__`, ...). */
  readonly marker: string;
  readonly decide: Decide;
  /**
   * Watch each node from its creation (default false: only a revocable lease's is): for a recipe
   * whose holds are long and few and whose hand-off speed matters more than two server packets
   * per node — an election. Its waiters then hear at once that their node went, the next in line
   * takes the hand-off without a listing (`OwnNodeWatch.mayTrust`), and the holder's loss on
   * deletion is heard from the start.
   */
  readonly watchOwnNode?: boolean;
  /**
   * Looks at the context's holds before joining: throw to refuse (e.g. a read→write upgrade),
   * or return a function that makes the hold another way (e.g. a write→read downgrade).
   */
  beforeJoin?(
    context: JoinContext,
  ): ((options: ResolvedLockOptions) => Promise<QueueHold>) | undefined;
}

/** A queue-based lock: its lease as an observable and a promise, and an operator running under it. */
export interface LockRecipe {
  /** Emits the lease once held; releases on unsubscribe; errors LockLostError on loss. */
  lease(client: ZkClient, path: string, options?: LockOptions): Observable<Lease>;
  /** Resolves the lease once held. */
  acquire(client: ZkClient, path: string, options?: LockOptions): Promise<Lease>;
  /** The lease if the lock is free now, else null; never waits. */
  tryAcquire(
    client: ZkClient,
    path: string,
    options?: Omit<LockOptions, 'timeoutMs'>,
  ): Promise<Lease | null>;
  /**
   * Runs the source only while holding the lock, releases when it ends: the operator behind
   * `withLock`, `withReadLock` and `withWriteLock`.
   */
  withLock<T>(client: ZkClient, path: string, options?: LockOptions): MonoTypeOperatorFunction<T>;
  /**
   * Runs `work(lease)` only while holding the lock: subscribed once held, unsubscribed (and the
   * observable erroring LockLostError) the moment the lock is lost, released when it ends.
   */
  holding<T>(
    client: ZkClient,
    path: string,
    options: LockOptions | undefined,
    work: (lease: Lease) => ObservableInput<T>,
  ): Observable<T>;
}

export interface ResolvedLockOptions {
  readonly client: ZkClient;
  readonly path: string;
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly onSuspended: SuspendedPolicy;
  readonly reentrant: boolean;
  readonly data: Buffer;
  readonly onQueued: ((node: string) => void) | undefined;
  readonly revocable: boolean;
  /** The lock's name in telemetry (`LockOptions.name`). */
  readonly name: string | undefined;
}

/**
 * Lock paths found valid lately: a service takes the same few locks over and over, and each
 * check walks the path and tests every segment against two patterns. Bounded: emptied when full.
 */
const validLockPaths = new Set<string>();
const VALID_LOCK_PATHS_KEPT = 1024;

/**
 * Checks a lock path: a valid ZooKeeper path, not the root, not inside another recipe's node.
 * Throws ZkError `InvalidPath` naming the problem.
 */
export function validateLockPath(path: unknown, what = 'lock'): string {
  if (typeof path === 'string' && validLockPaths.has(path)) return path;
  const valid = validatePath(path);
  if (valid === '/') {
    throw new ZkError(
      ZkErrorCode.InvalidPath,
      `Invalid ${what} path "/": the root cannot be a ${what}`,
      {
        path: valid,
      },
    );
  }
  for (const segment of valid.split('/')) {
    if (isRecipeNodeName(segment)) {
      throw new ZkError(
        ZkErrorCode.InvalidPath,
        `Invalid ${what} path ${JSON.stringify(valid)}: "${segment}" is another recipe's node (lock nodes have no children)`,
        { path: valid },
      );
    }
  }
  if (validLockPaths.size >= VALID_LOCK_PATHS_KEPT) validLockPaths.clear();
  validLockPaths.add(valid);
  return valid;
}

/** Checks a timeout: a finite number of milliseconds >= 0, or undefined. */
export function validateTimeout(value: unknown, name = 'timeoutMs'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${name} must be a finite number of milliseconds >= 0, got ${String(value)}`,
    );
  }
  return value;
}

/** Validates the common options; throws ZkError `BadArguments`/`InvalidPath` on bad input. */
export function resolveLockOptions(
  client: unknown,
  path: unknown,
  options: LockOptions | undefined,
  what = 'lock',
): ResolvedLockOptions {
  if (!ZkClient.isInstance(client)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: expected a ZkClient from @zkrx/core's createClient`,
    );
  }
  const valid = validateLockPath(path, what);
  const given = options ?? {};
  if (typeof given !== 'object')
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: options must be an object`);
  const onSuspended = given.onSuspended ?? 'release';
  if (onSuspended !== 'release' && onSuspended !== 'continue') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: onSuspended must be 'release' or 'continue', got ${String(onSuspended)}`,
    );
  }
  const reentrant = given.reentrant ?? true;
  if (typeof reentrant !== 'boolean') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: reentrant must be a boolean`);
  }
  const signal = given.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: signal must be an AbortSignal`);
  }
  if (given.onQueued !== undefined && typeof given.onQueued !== 'function') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: onQueued must be a function`);
  }
  const revocable = given.revocable ?? false;
  if (typeof revocable !== 'boolean') {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: revocable must be a boolean`);
  }
  const name = given.name;
  if (name !== undefined && (typeof name !== 'string' || name.length === 0)) {
    throw new ZkError(ZkErrorCode.BadArguments, `${what}: name must be a non-empty string`);
  }
  return {
    client,
    path: valid,
    timeoutMs: validateTimeout(given.timeoutMs),
    signal,
    onSuspended,
    reentrant,
    data: toDataBuffer(given.data === undefined ? defaultLockData : given.data, valid),
    onQueued: given.onQueued,
    revocable,
    name,
  };
}

function anySignal(signals: readonly (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/**
 * A lease as an observable: `start(signal)` makes the hold once subscribed (a hold already in the
 * context can be given at once); emits the lease in a context holding it, errors with the
 * LockLostError on loss, completes when the lease ends otherwise, releases on unsubscribe (and
 * aborts `signal` while the hold is still being made).
 *
 * @param start Makes the hold; may throw or reject (the observable errors).
 * @return The lease, once.
 */
export function observeLease(
  start: (signal: AbortSignal) => LeaseCore | Promise<LeaseCore | undefined>,
): Observable<Lease> {
  return new Observable<Lease>((subscriber) => {
    const controller = new AbortController();
    let lease: Lease | undefined;
    let watching: Subscription | undefined;
    let started = false;
    const deliver = (core: LeaseCore | undefined) => {
      started = true;
      if (!core) return;
      const own = retainLease(core);
      if (subscriber.closed) {
        void own.release();
        return;
      }
      lease = own;
      watching = watchLeaseState(own, {
        next: (state) => {
          if (state === 'lost') subscriber.error(core.lostError);
        },
        complete: () => subscriber.complete(),
      });
      if (!subscriber.closed) runHolding(core, () => subscriber.next(own));
    };
    try {
      const starting = start(controller.signal);
      if (starting instanceof LeaseCore) deliver(starting);
      else {
        starting.then(deliver, (error: unknown) => {
          started = true;
          subscriber.error(error);
        });
      }
    } catch (error) {
      started = true;
      subscriber.error(error);
    }
    return () => {
      // Gives up a hold still being made; once made, nothing listens to the signal any more (and
      // an abort would cost a DOMException for nothing).
      if (!started) controller.abort();
      watching?.unsubscribe();
      void lease?.release();
    };
  });
}

/**
 * Makes a lock recipe from its queue rule. The mutex, the read and write locks and the leader
 * recipes are all made this way.
 *
 * @param spec The recipe's name, node marker and rule.
 * @return The recipe's observable, promise, try-once and operator forms.
 */
export function defineLockRecipe(spec: LockRecipeSpec): LockRecipe {
  const joinContext = (resolved: ResolvedLockOptions): JoinContext => ({
    client: resolved.client,
    path: resolved.path,
    held: (recipe) => heldInContext(resolved.client, recipe, resolved.path),
  });

  /**
   * Re-entrancy: a live hold by this recipe on this path by this client in this async context is
   * given again, counted, with no new node and no listing.
   *
   * Safe because it makes no new holder: the same node, session and context hold on, so the
   * re-entered lease is exactly as held as the outer one, and the two end together (the hold's
   * state is shared). Only a hold not yet known lost is re-entered; one whose session ended is
   * lost (session events), one whose node went is lost once the lease hears of it (its node
   * watch, set when anyone listens; a guard), and the call queues anew. Until the lease hears of
   * a deletion, re-entering makes no holder the outer lease was not already.
   */
  const reentered = (resolved: ResolvedLockOptions): LeaseCore | undefined =>
    resolved.reentrant ? heldInContext(resolved.client, spec.name, resolved.path) : undefined;

  /** One acquisition, timed and traced (`zkrx.lock.acquire`, see telemetry.ts). */
  const hold = (resolved: ResolvedLockOptions, wait: boolean, signal?: AbortSignal) => {
    const merged = { ...resolved, signal: anySignal([resolved.signal, signal]) };
    return timedAcquire(
      { kind: spec.name, path: resolved.path, name: resolved.name },
      merged.signal,
      () => makeHold(merged, wait),
    );
  };

  const makeHold = async (resolved: ResolvedLockOptions, wait: boolean) => {
    const custom = spec.beforeJoin?.(joinContext(resolved));
    const held = custom
      ? await custom(resolved)
      : await joinQueue({
          client: resolved.client,
          path: resolved.path,
          marker: spec.marker,
          data: resolved.data,
          decide: spec.decide,
          timeoutMs: resolved.timeoutMs,
          signal: resolved.signal,
          wait,
          onQueued: resolved.onQueued,
          // A revocable lease watches its node from creation (it hears requests made while it
          // waits): the watch it needs anyway also lets a hand-off be trusted without a listing.
          // A lease merely listened to watches it only once held long enough (`LeaseCore.listen`).
          watchOwnNode: spec.watchOwnNode === true || resolved.revocable,
        });
    if (!held) return undefined;
    return new LeaseCore(
      {
        client: resolved.client,
        path: resolved.path,
        recipe: spec.name,
        onSuspended: resolved.onSuspended,
        revocable: resolved.revocable,
        name: resolved.name,
      },
      held,
    );
  };

  const lease = (client: ZkClient, path: string, options?: LockOptions): Observable<Lease> =>
    observeLease((signal) => {
      const resolved = resolveLockOptions(client, path, options, spec.name);
      return reentered(resolved) ?? hold(resolved, true, signal);
    });

  const acquire = async (client: ZkClient, path: string, options?: LockOptions): Promise<Lease> => {
    const resolved = resolveLockOptions(client, path, options, spec.name);
    const existing = reentered(resolved);
    if (existing) return retainLease(existing);
    const core = await hold(resolved, true);
    if (!core) throw new ZkError(ZkErrorCode.SystemError, `${spec.name} ${path}: not acquired`);
    return retainLease(core);
  };

  const tryAcquire = async (
    client: ZkClient,
    path: string,
    options?: Omit<LockOptions, 'timeoutMs'>,
  ): Promise<Lease | null> => {
    // Never waits: a timeout, if given, is checked and then has nothing to bound.
    const resolved = {
      ...resolveLockOptions(client, path, options, spec.name),
      timeoutMs: undefined,
    };
    const existing = reentered(resolved);
    if (existing) return retainLease(existing);
    const core = await hold(resolved, false);
    return core ? retainLease(core) : null;
  };

  const holding = <T>(
    client: ZkClient,
    path: string,
    options: LockOptions | undefined,
    work: (lease: Lease) => ObservableInput<T>,
  ): Observable<T> =>
    new Observable<T>((subscriber) => {
      let running: Subscription | undefined;
      const lock = lease(client, path, options).subscribe({
        next: (held) => {
          try {
            running = from(work(held)).subscribe(subscriber);
          } catch (error) {
            subscriber.error(error);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        // The lease ended without loss: released by hand or by client.close().
        complete: () => {
          if (!subscriber.closed) {
            subscriber.error(
              new ZkError(
                ZkErrorCode.ClientClosed,
                `${spec.name} ${path}: lease ended before the work`,
              ),
            );
          }
        },
      });
      return () => {
        // Stop the work first, then release the lock.
        running?.unsubscribe();
        lock.unsubscribe();
      };
    });

  const withLock =
    <T>(client: ZkClient, path: string, options?: LockOptions): MonoTypeOperatorFunction<T> =>
    (source) =>
      holding(client, path, options, () => source);

  return { lease, acquire, tryAcquire, withLock, holding };
}
