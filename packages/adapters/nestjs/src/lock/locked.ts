/**
 * The @Locked method decorator: the method runs while its application holds a ZooKeeper lock,
 * re-entrantly, and stops (signal aborted, call rejected) the moment the lock is lost.
 */
import { onAbort, ZkError, ZkErrorCode, ZkrxError } from '@zkrx/core';
import { LockBusyError, LockLostError, type SuspendedPolicy } from '@zkrx/lock';
import { validateLockPath, validateTimeout } from '@zkrx/lock/recipe';
import { from, isObservable, Observable, type Subscription } from 'rxjs';
import {
  checkChoice,
  checkOptionsObject,
  decorateMethod,
  type MethodDecoration,
  NEEDS_ZK_MODULE,
  PerInstance,
} from '../connection/method-decoration';
import { ZK_CONNECTION } from '../connection/tokens';
import type { HeldLock, LockKind, ZkConnection } from '../connection/zk-connection';
import { type CurrentLock, currentLock, runWithLock } from './lock-context';
import { markAnswer } from './retry-later';

/** The lock path, or a function of the method's arguments (called with the instance as `this`). */
// biome-ignore lint/suspicious/noExplicitAny: the path function takes the method's arguments
export type LockedPath = string | ((...args: any[]) => string);

export interface LockedOptions {
  /**
   * `wait` (default): wait for the lock (at most `timeoutMs`, then reject LockTimeoutError).
   * `skip`: when the lock is taken, return without running: a Promise method resolves
   * `undefined`, an Observable method completes without emitting.
   */
  mode?: 'wait' | 'skip';
  /** With `mode: 'wait'`: give up after this long with LockTimeoutError. Default: wait. */
  timeoutMs?: number;
  /**
   * Which lock of the path: `mutex` (default; Curator's InterProcessMutex layout, the lock
   * @zkrx/express's `zkLock` takes by default), or the `read` / `write` lock of the path's
   * read-write lock (with @zkrx/rwlock installed). Only readers share; any two of the three
   * otherwise exclude each other.
   */
  lock?: LockKind;
  /** While the connection is suspended: `release` (default) treats the lock as lost at once. */
  onSuspended?: SuspendedPolicy;
  /**
   * The `Retry-After` (seconds) of the answer an HTTP request gets when the lock is busy, not
   * acquired in time, lost, or ZooKeeper unavailable (409 or 503, as @zkrx/express answers).
   * Default 1.
   */
  retryAfterSeconds?: number;
  /**
   * What the method returns, when its declared return type cannot tell (no
   * `emitDecoratorMetadata`, or no return type written): `observable` or `promise`.
   */
  returns?: 'promise' | 'observable';
}

/** A method @Locked can guard: one returning a Promise, an Observable, or nothing. */
export type LockableMethod = (
  // biome-ignore lint/suspicious/noExplicitAny: any arguments
  ...args: any[]
  // biome-ignore lint/suspicious/noConfusingVoidType: a method declared `(): void` qualifies
) => void | PromiseLike<unknown> | Observable<unknown>;

/**
 * @Locked's options as a function of the instance, called when the application starts: options
 * from configuration an injected service holds (`(self: Billing) => ({ timeoutMs:
 * self.config.lockTimeoutMs })`). `returns` can only be given as a value.
 */
// biome-ignore lint/suspicious/noExplicitAny: the decorated class's instance
export type LockedOptionsOf = (instance: any) => Omit<LockedOptions, 'returns'>;

/** @Locked's options, checked, with their defaults. */
interface CheckedLockedOptions {
  readonly mode: 'wait' | 'skip';
  readonly timeoutMs: number | undefined;
  readonly lock: LockKind;
  readonly onSuspended: SuspendedPolicy | undefined;
  readonly retryAfterSeconds: number;
  readonly returns: 'promise' | 'observable' | undefined;
}

/** Checks @Locked's options (ZkError `BadArguments` naming the bad one). */
function checkLockedOptions(given: LockedOptions): CheckedLockedOptions {
  const options = checkOptionsObject('@Locked', given);
  const mode = checkChoice('@Locked', 'mode', options.mode, ['wait', 'skip']);
  const timeoutMs = validateTimeout(options.timeoutMs);
  if (mode === 'skip' && timeoutMs !== undefined) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      "@Locked: timeoutMs applies to mode 'wait' ('skip' never waits)",
    );
  }
  if ('read' in options) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      "@Locked: the read option is gone: say lock: 'read' (or 'write'; the default is 'mutex')",
    );
  }
  const lock = checkChoice('@Locked', 'lock', options.lock, ['mutex', 'read', 'write']);
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `@Locked: retryAfterSeconds must be a whole number of seconds >= 0, got ${String(retryAfterSeconds)}`,
    );
  }
  const { onSuspended, returns } = options;
  return { mode, timeoutMs, lock, onSuspended, retryAfterSeconds, returns };
}

/** The module's connection, on each decorated instance. */
const locked: MethodDecoration<ZkConnection> = {
  decorator: '@Locked',
  key: Symbol.for('@zkrx/nestjs: @Locked needs ZkModule'),
  token: ZK_CONNECTION,
  needs: NEEDS_ZK_MODULE,
};

/** Observable when the declared return type is an Observable class; promise for any other type. */
function returnKindOf(type: unknown): 'observable' | 'promise' | undefined {
  if (typeof type !== 'function') return undefined;
  const prototype = (type as { prototype?: unknown }).prototype as
    | { subscribe?: unknown; pipe?: unknown }
    | undefined;
  if (
    type === Observable ||
    (prototype && typeof prototype.subscribe === 'function' && typeof prototype.pipe === 'function')
  ) {
    return 'observable';
  }
  return 'promise';
}

/** Why the lease ended while the method still ran: its LockLostError, or the session's end. */
function endedError(lease: HeldLock, path: string): LockLostError {
  const reason: unknown = lease.signal.reason;
  // Ended without a loss: the client was closed (its session, and the lock node, are gone).
  return LockLostError.isInstance(reason) ? reason : new LockLostError(path, 'session-expired');
}

/**
 * The reason a method's lock signal aborts with once the method has returned and its lock is
 * released (named `AbortError`, as aborts are; code `LockReleased`).
 */
class LockReleasedError extends ZkrxError<'LockReleased'> {
  override readonly name = 'AbortError';

  constructor(readonly path: string) {
    super('LockReleased', `Lock ${path} released: the @Locked method has returned`);
  }
}

/**
 * The context a method runs in under `lease`: its signal also follows any enclosing lock and the
 * application's shutdown.
 */
function lockContext(
  lease: HeldLock,
  path: string,
  controller: AbortController,
  shutdown: AbortSignal,
): CurrentLock {
  const enclosing = currentLock()?.signal;
  return {
    path,
    fencingToken: lease.fencingToken,
    signal: AbortSignal.any(
      enclosing ? [controller.signal, enclosing, shutdown] : [controller.signal, shutdown],
    ),
  };
}

/**
 * Runs `call` under `lease` (lock context and the lock package's re-entrancy): settles with its
 * result after releasing the lease, or rejects LockLostError the moment the lease ends first.
 */
function runLeased(
  lease: HeldLock,
  path: string,
  connection: ZkConnection,
  call: () => unknown,
  where: string,
  retryAfterSeconds: number,
): Promise<unknown> {
  const controller = new AbortController();
  const context = lockContext(lease, path, controller, connection.signal);
  return new Promise<unknown>((resolve, reject) => {
    let done = false;
    const onEnded = () => {
      if (done) return;
      done = true;
      const error = endedError(lease, path);
      controller.abort(error);
      connection.track(lease.release());
      reject(markAnswer(error, retryAfterSeconds));
    };
    const complete = (settle: () => void) => {
      if (done) return;
      done = true;
      lease.signal.removeEventListener('abort', onEnded);
      const finish = () => {
        controller.abort(new LockReleasedError(path));
        settle();
      };
      lease.release().then(finish, finish);
    };
    lease.signal.addEventListener('abort', onEnded, { once: true });
    if (lease.signal.aborted) return onEnded();
    let result: unknown;
    try {
      result = lease.run(() => runWithLock(context, call));
    } catch (error) {
      return complete(() => reject(error));
    }
    if (isObservable(result)) {
      const error = new ZkError(
        ZkErrorCode.BadArguments,
        `${where} returned an Observable, but @Locked could not tell before calling it: declare its return type (: Observable<T>, with emitDecoratorMetadata) or pass { returns: 'observable' }`,
      );
      return complete(() => reject(error));
    }
    Promise.resolve(result).then(
      (value) => complete(() => resolve(value)),
      (error: unknown) => complete(() => reject(error)),
    );
  });
}

/**
 * Runs the decorated method only while this application holds the ZooKeeper lock at `path`.
 *
 * - A method returning a Promise (or nothing, or a plain value) returns a Promise: the lock is
 *   acquired, the method runs, the lock is released, then the Promise settles with the method's
 *   result. An Observable method (declared `: Observable<T>`) returns an Observable that, on each
 *   subscription, acquires the lock, then calls the method and mirrors its Observable, releasing
 *   the lock when it completes, errors or is unsubscribed.
 * - Re-entrant: a @Locked method called (directly or not) from one holding the same lock in the
 *   same async context runs at once under the held lock.
 * - Lock lost (session expired, connection suspended, node deleted, client closed): the
 *   method's {@link lockSignal} aborts and the call rejects (errors) with LockLostError at once.
 * - Application shutdown: calls still waiting reject ZkError `ClientClosed`; a running method's
 *   {@link lockSignal} aborts (same error) while it keeps the lock until it returns, and the
 *   shutdown waits for it; an Observable method errors with it, unsubscribed before the release.
 * - `mode: 'skip'`: when the lock is taken, resolves `undefined` (completes) without running;
 *   on a route handler (`@Get`, `@Post`...) rejects LockBusyError instead: 409, not an empty 200.
 * - ZooKeeper out of reach (not connected, or the connection lost while waiting): rejects at
 *   once with ZkError `ConnectionLoss`, not after `timeoutMs`.
 * - On HTTP routes, the lock's failures answer as @zkrx/express does: 409 (busy, timeout) or
 *   503 (unavailable, lost) with `Retry-After` and `{ error, message }` (ZkModule's interceptor).
 *   The method's own errors pass unchanged.
 * - The instance must be made by Nest in an application that has ZkModule (Nest injects the
 *   module's client into it); other decorators on the method (`@Cron`, `@Interval`, ...) keep
 *   their metadata in either order.
 *
 * ## Example
 * ```ts
 * @Injectable()
 * export class Billing {
 *   @Cron('0 * * * * *')
 *   @Locked('/locks/billing', { mode: 'skip' })
 *   async chargeDueInvoices() {
 *     for (const invoice of await this.due()) await this.charge(invoice, { signal: lockSignal() });
 *   }
 *
 *   @Locked((order: Order) => `/locks/orders/${order.id}`, { timeoutMs: 5_000 })
 *   async ship(order: Order) {
 *     await this.carrier.book(order, currentLock()!.fencingToken);
 *   }
 * }
 * ```
 *
 * @param path The lock path, or a function of the method's arguments returning it.
 * @param options Wait or skip, timeout, read or write lock, suspended policy; or a function of
 *   the instance returning them (resolved when the application starts).
 * @return A method decorator.
 */
export function Locked(path: LockedPath, options: LockedOptions | LockedOptionsOf = {}) {
  if (typeof path === 'string') validateLockPath(path);
  else if (typeof path !== 'function') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      '@Locked: path must be a string or a function of the arguments',
    );
  }
  // Given as a value: checked here. As a function of the instance: when the application starts.
  const given = typeof options === 'function' ? undefined : checkLockedOptions(options);
  const optionsOf = new PerInstance<CheckedLockedOptions>(
    (instance) => given ?? checkLockedOptions((options as LockedOptionsOf)(instance)),
  );

  return <M extends LockableMethod>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void =>
    decorateMethod(
      locked,
      target,
      key,
      descriptor,
      ({ original, where, serviceOf: connectionOf, onInstance }) => {
        const returns =
          given?.returns ?? returnKindOf(Reflect.getMetadata('design:returntype', target, key));
        if (!given) onInstance((instance) => optionsOf.take(instance));

        const pathOf = (instance: unknown, args: unknown[]): string =>
          typeof path === 'string' ? path : path.apply(instance, args);

        // Not connected, or the connection lost while waiting: rejects at once (503 on a
        // route), not after timeoutMs. Rejections are marked with their HTTP answer.
        const acquireLease = (
          connection: ZkConnection,
          resolved: CheckedLockedOptions,
          lockPath: string,
          signal: AbortSignal,
        ): Promise<HeldLock | null> =>
          connection
            .acquireLock(
              resolved.lock,
              lockPath,
              {
                mode: resolved.mode,
                timeoutMs: resolved.timeoutMs,
                // The module's `onSuspended` is the default (each application its own).
                onSuspended: resolved.onSuspended ?? connection.onSuspended,
              },
              signal,
            )
            .catch((error: unknown) =>
              Promise.reject(markAnswer(error, resolved.retryAfterSeconds)),
            );

        // A skipped route handler (a method with @Get, @Post...) answers 409, not an empty 200;
        // a skipped call from code resolves undefined. Nest's route decorators write `path`
        // (PATH_METADATA) on the method, before or after @Locked replaced it.
        const skipped = (
          lockPath: string,
          { retryAfterSeconds }: CheckedLockedOptions,
        ): LockBusyError | undefined =>
          Reflect.hasMetadata('path', wrapper)
            ? (markAnswer(new LockBusyError(lockPath), retryAfterSeconds) as LockBusyError)
            : undefined;

        function lockedPromise(this: unknown, ...args: unknown[]): Promise<unknown> {
          return (async () => {
            const connection = connectionOf(this);
            const resolved = optionsOf.of(this as object);
            const lockPath = pathOf(this, args);
            const lease = await acquireLease(connection, resolved, lockPath, connection.signal);
            if (!lease) {
              const busy = skipped(lockPath, resolved);
              if (busy) throw busy;
              return undefined;
            }
            return connection.hold(
              runLeased(
                lease,
                lockPath,
                connection,
                () => original.apply(this, args),
                where,
                resolved.retryAfterSeconds,
              ),
            );
          })();
        }

        function lockedObservable(this: unknown, ...args: unknown[]): Observable<unknown> {
          const connection = connectionOf(this);
          const resolved = optionsOf.of(this as object);
          const lockPath = pathOf(this, args);
          return new Observable<unknown>((subscriber) => {
            const acquiring = new AbortController();
            const controller = new AbortController();
            let lease: HeldLock | undefined;
            let stopShutdownListening: (() => void) | undefined;
            let work: Subscription | undefined;
            let ending = false;
            const onEnded = () => {
              if (ending || !lease) return;
              const error = endedError(lease, lockPath);
              controller.abort(error);
              subscriber.error(markAnswer(error, resolved.retryAfterSeconds));
            };
            // Shutdown ends the stream: the work is unsubscribed, then the lock released.
            const onShutdown = () => subscriber.error(connection.signal.reason);
            acquireLease(
              connection,
              resolved,
              lockPath,
              AbortSignal.any([acquiring.signal, connection.signal]),
            ).then(
              (held) => {
                if (!held) {
                  const busy = skipped(lockPath, resolved);
                  return busy ? subscriber.error(busy) : subscriber.complete();
                }
                if (subscriber.closed) return connection.track(held.release());
                lease = held;
                held.signal.addEventListener('abort', onEnded, { once: true });
                if (held.signal.aborted) return onEnded();
                // One listener on the application's signal for all requests (onAbort), not one each.
                stopShutdownListening = onAbort(connection.signal, onShutdown);
                if (connection.signal.aborted) return onShutdown();
                const context = lockContext(held, lockPath, controller, connection.signal);
                held.run(() =>
                  runWithLock(context, () => {
                    try {
                      work = from(original.apply(this, args) as Observable<unknown>).subscribe(
                        subscriber,
                      );
                    } catch (error) {
                      subscriber.error(error);
                    }
                  }),
                );
              },
              (error: unknown) => subscriber.error(error),
            );
            return () => {
              ending = true;
              acquiring.abort();
              stopShutdownListening?.();
              work?.unsubscribe();
              if (lease) {
                lease.signal.removeEventListener('abort', onEnded);
                controller.abort(new LockReleasedError(lockPath));
                connection.track(lease.release());
              }
            };
          });
        }

        const wrapper = returns === 'observable' ? lockedObservable : lockedPromise;
        return wrapper;
      },
    );
}
