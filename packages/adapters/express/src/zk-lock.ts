/**
 * zkLock: Express middleware that holds a ZooKeeper lock per request path for the life of the
 * request, released once when the response finishes or the connection closes.
 */
import { type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { type Lease, LockBusyError, type LockLostError } from '@zkrx/lock';
import { acquireWhileConnected, type RetryLater, retryLaterOf } from '@zkrx/lock/adapter';
import { validateLockPath } from '@zkrx/lock/recipe';
import { type LockKind, lockKinds } from '@zkrx/rwlock';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Subscription } from 'rxjs';
import {
  checkChoice,
  checkClient,
  checkFunction,
  checkMilliseconds,
  checkOptions,
  checkPath,
  checkSeconds,
  checkStatusCode,
} from './options';
import { localOf } from './response-state';
import { answerRetryLater, withStatus } from './retry-later';

export interface ZkLockOptions {
  /** The client whose session holds the locks (one per app instance). */
  client: ZkClient;
  /**
   * The lock path of a request, e.g. `(request) => \`/locks/sku/${nodeName(request.params.sku)}\``
   * (`nodeName` from @zkrx/lock: an id from the request is one node name, whatever it holds),
   * or one path for every request. Requests with the same path never run at once; different
   * paths run in parallel.
   */
  path: string | ((request: Request) => string);
  /** With `mode: 'wait'`: give up after this long and answer `statusCode`. Default: wait as long as it takes. */
  timeoutMs?: number;
  /** `wait` (default): queue behind the current holder; `skip`: answer `statusCode` at once when busy. */
  mode?: 'wait' | 'skip';
  /** The status answered when the lock is busy (`mode: 'skip'`) or not acquired in `timeoutMs`. Default 409. */
  statusCode?: number;
  /** The `Retry-After` header (seconds) of the busy, timeout and unavailable answers. Default 1. */
  retryAfterSeconds?: number;
  /**
   * Which lock of the path: `mutex` (default; Curator's InterProcessMutex layout, the lock
   * @zkrx/nestjs's `@Locked` takes by default), or the `read` / `write` lock of the path's
   * read-write lock. Only readers share; any two of the three otherwise exclude each other.
   */
  lock?: LockKind;
  /**
   * Called once if the lock is lost mid-request (session expired, or connection lost: ownership
   * is then uncertain). `lease.signal` has aborted already; the error carries `status` 503.
   */
  onLost?: (error: LockLostError, request: Request, response: Response) => void;
}

const where = 'zkLock';

/** What the `res.locals` key holds: the request's lease. */
const LEASE = 'lease';

/**
 * The lease of the lock `zkLock` holds for this request (`res.locals.lease`, typed).
 *
 * ## Example
 * ```ts
 * app.post('/orders/:id/pay', zkLock({ client, path: (request) => `/locks/orders/${nodeName(request.params.id)}` }),
 *   async (request, response) => {
 *     const lease = leaseOf(response);
 *     await payments.charge(request.params.id, { signal: lease.signal, fencingToken: lease.fencingToken });
 *     response.json({ paid: true });
 *   });
 * ```
 *
 * @param response The response of a request that went through `zkLock`.
 * @return The lease; throws when the request holds none.
 */
export function leaseOf(response: Response): Lease {
  return localOf<Lease>(
    response,
    LEASE,
    'leaseOf: this request holds no lock (no zkLock middleware before this handler)',
  );
}

/**
 * Express middleware (4 and 5) that holds a ZooKeeper lock for the life of each request: the
 * path comes from `path(request)`, the lock is released once when the response finishes or the
 * connection closes (a client that goes away mid-request releases it at once).
 *
 * Answers without calling the handler when:
 * - the lock is busy and `mode` is `skip`, or not acquired within `timeoutMs`: `statusCode`
 *   (409) with `Retry-After` and `{ error: 'lock-busy' | 'lock-timeout' }`;
 * - ZooKeeper is unavailable (not connected, connection lost while waiting, no connection in
 *   time): 503 with `Retry-After` and `{ error: 'zookeeper-unavailable' }`.
 *
 * An invalid lock path from `path` goes to `next(error)` (ZkError `InvalidPath`, `status` 500),
 * and so does any other error (with `status` 500). The handler finds the lease in
 * `res.locals.lease` (or `leaseOf(res)`): if the lock is lost mid-request, `lease.signal`
 * aborts with a LockLostError (`status` 503): stop the work, write nothing more, and throw
 * `lease.signal.reason` (or answer 503) — the fencing token lets your store refuse a late write.
 * The handler runs in an async context holding the lease, so taking the same lock again inside
 * it (e.g. `acquireWrite(client, path)` from a service) re-enters it instead of waiting.
 *
 * ## Example
 * ```ts
 * import { createClient } from '@zkrx/core';
 * import { zkLock } from '@zkrx/express';
 *
 * const client = createClient({ connect: '127.0.0.1:2181' });
 * app.post(
 *   '/purchase/:sku',
 *   zkLock({ client, path: (request) => `/shop/locks/${nodeName(request.params.sku)}`, timeoutMs: 2_000 }),
 *   async (request, response) => response.json(await purchase(request.params.sku)),
 * );
 * // Two instances, one SKU: the purchases run one after the other.
 * ```
 *
 * @param options The client, the path, and how to wait.
 * @return The middleware.
 */
export function zkLock(options: ZkLockOptions): RequestHandler {
  const given = checkOptions(where, options);
  const client = checkClient(where, given.client);
  const path =
    typeof given.path === 'string'
      ? checkPath(where, given.path)
      : checkFunction<(request: Request) => string>(where, 'path', given.path, true);
  const timeoutMs = checkMilliseconds(where, 'timeoutMs', given.timeoutMs);
  const wait = checkChoice(where, 'mode', given.mode, ['wait', 'skip'], 'wait') === 'wait';
  const statusCode = checkStatusCode(where, 'statusCode', given.statusCode, 409);
  const retryAfterSeconds = checkSeconds(where, 'retryAfterSeconds', given.retryAfterSeconds, 1);
  if ('read' in given) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${where}: the read option is gone: say lock: 'read' (or 'write'; the default is 'mutex')`,
    );
  }
  const lock =
    lockKinds[
      checkChoice(where, 'lock', given.lock, Object.keys(lockKinds) as LockKind[], 'mutex')
    ];
  const onLost = checkFunction<NonNullable<ZkLockOptions['onLost']>>(
    where,
    'onLost',
    given.onLost,
    false,
  );
  if (!wait && timeoutMs !== undefined) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${where}: timeoutMs applies to mode 'wait' ('skip' never waits)`,
    );
  }

  const take = (path: string, signal: AbortSignal): Promise<Lease | null> => {
    if (wait) return lock.acquire(client, path, { timeoutMs, signal, reentrant: false });
    return lock.tryAcquire(client, path, { signal, reentrant: false });
  };

  return function zkLockMiddleware(request: Request, response: Response, next: NextFunction) {
    let lockPath: string;
    try {
      lockPath = typeof path === 'string' ? path : validateLockPath(path(request));
    } catch (error) {
      next(withStatus(error, 500));
      return;
    }
    if (response.destroyed || response.writableFinished) return; // the client left already

    const controller = new AbortController();
    let lease: Lease | undefined;
    let ended = false;
    let releasing: Promise<void> | undefined;
    let lostWatch: Subscription | undefined;

    const release = (): void => {
      if (!lease || releasing) return;
      releasing = lease.release().catch(() => {});
    };
    const end = (): void => {
      if (ended) return;
      ended = true;
      response.off('finish', end);
      response.off('close', end);
      lostWatch?.unsubscribe();
      if (!lease)
        controller.abort(new ZkError(ZkErrorCode.Aborted, `${where} ${lockPath}: the client left`));
      release();
    };
    const answer = (status: number, error: unknown): void =>
      answerRetryLater(response, status, retryAfterSeconds, retryLaterOf(error) as RetryLater);

    response.once('finish', end);
    response.once('close', end);
    // Not connected, or the connection lost while waiting: 503 at once, not after timeoutMs.
    acquireWhileConnected(client, (signal) => take(lockPath, signal), controller.signal).then(
      (acquired) => {
        if (ended) {
          // The client left meanwhile: nobody to answer.
          void acquired?.release().catch(() => {});
          return;
        }
        if (!acquired) return answer(statusCode, new LockBusyError(lockPath));
        if (!acquired.isHeld) {
          // Lost on arrival: the session went while the reply travelled.
          void acquired.release().catch(() => {});
          return answer(503, new ZkError(ZkErrorCode.SessionExpired, 'lease lost'));
        }
        lease = acquired;
        (response.locals as Record<string, unknown>)[LEASE] = acquired;
        lostWatch = acquired.lost$.subscribe((error) => {
          withStatus(error, 503, retryAfterSeconds);
          if (!onLost) return;
          try {
            onLost(error, request, response);
          } catch (callbackError) {
            // The handler owns the response now: report, never throw from a watch callback.
            process.emitWarning(`zkLock onLost threw: ${String(callbackError)}`);
          }
        });
        // The handler runs in an async context holding the lease: taking the same lock again
        // there re-enters it (rather than queueing behind itself).
        acquired.run(() => next());
      },
      (error: unknown) => {
        if (ended) return;
        const retryLater = retryLaterOf(error);
        if (!retryLater) next(withStatus(error, 500));
        else answer(retryLater.status === 409 ? statusCode : retryLater.status, error);
      },
    );
  };
}
