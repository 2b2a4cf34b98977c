/**
 * What a request answers when its lock stands in the way — the one mapping @zkrx/express and
 * @zkrx/nestjs share (reasons, statuses, messages) — and the acquisition both make, which fails
 * at once while ZooKeeper is out of reach instead of waiting out its timeout.
 */
import { isZkError, onAbort, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { LockBusyError, LockLostError, LockTimeoutError } from './recipe/errors';
import { sessionOf } from './recipe/session';

/**
 * Why a request cannot run now: the lock is held (`lock-busy`: not waited for; `lock-timeout`:
 * not acquired in time), was lost while the request ran (`lock-lost`), or ZooKeeper cannot be
 * reached (`zookeeper-unavailable`).
 */
export type RetryLaterReason = 'lock-busy' | 'lock-timeout' | 'lock-lost' | 'zookeeper-unavailable';

/** The answer to a request its lock stands in the way of: the `error` of the body, and more. */
export interface RetryLater {
  readonly reason: RetryLaterReason;
  /**
   * The HTTP status: 409 (Conflict) for a busy lock or a timeout — the resource is busy, the
   * service is healthy — and 503 (Service Unavailable) for a lost lock or ZooKeeper out of reach,
   * so that what counts 503s sees outages, not contention.
   */
  readonly status: 409 | 503;
  /** A sentence for the body's `message`. */
  readonly message: string;
}

const answers: Record<RetryLaterReason, RetryLater> = {
  'lock-busy': {
    reason: 'lock-busy',
    status: 409,
    message: 'Another request holds the lock of this resource',
  },
  'lock-timeout': {
    reason: 'lock-timeout',
    status: 409,
    message: 'The lock of this resource was not acquired in time',
  },
  'lock-lost': {
    reason: 'lock-lost',
    status: 503,
    message: 'The lock of this resource was lost while the request ran',
  },
  'zookeeper-unavailable': {
    reason: 'zookeeper-unavailable',
    status: 503,
    message: 'The coordination service (ZooKeeper) is unavailable',
  },
};

const unavailableCodes: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.ConnectTimeout,
  ZkErrorCode.SessionExpired,
  ZkErrorCode.SessionMoved,
  ZkErrorCode.Throttled,
  ZkErrorCode.ClientClosed,
  ZkErrorCode.AuthFailed,
];

/**
 * Whether an error means ZooKeeper cannot be reached right now (connection lost, no connection
 * in time, session expired, throttled, client closed, credentials refused): an outage to answer
 * 503 to, not a bug to report.
 *
 * ## Example
 * ```ts
 * try {
 *   await client.promises.get('/config');
 * } catch (error) {
 *   if (isZooKeeperUnavailable(error)) return response.status(503).set('Retry-After', '5').end();
 *   throw error;
 * }
 * ```
 *
 * @param error Anything thrown or rejected.
 * @return True for a ZkError whose code says ZooKeeper is out of reach.
 */
export function isZooKeeperUnavailable(error: unknown): boolean {
  return isZkError(error, ...unavailableCodes);
}

/**
 * What a request answers when `error` is its lock's failure: `lock-busy` (LockBusyError, 409),
 * `lock-timeout` (LockTimeoutError, 409 — but 503 `zookeeper-unavailable` when its `cause` says
 * ZooKeeper was out of reach for the whole wait), `lock-lost` (LockLostError, 503),
 * `zookeeper-unavailable` (see {@link isZooKeeperUnavailable}, 503); undefined for any other
 * error. The adapters answer with it: the status, `Retry-After`, and `{ error: reason, message }`.
 *
 * ## Example
 * ```ts
 * const answer = retryLaterOf(new LockTimeoutError('/locks/orders/42', 5_000));
 * console.log(answer?.status, answer?.reason);
 * // Output: 409 lock-timeout
 * ```
 *
 * @param error Anything thrown or rejected.
 * @return The answer, or undefined when the error is not the lock's.
 */
export function retryLaterOf(error: unknown): RetryLater | undefined {
  if (LockBusyError.isInstance(error)) return answers['lock-busy'];
  if (LockTimeoutError.isInstance(error)) {
    return isZooKeeperUnavailable(error.cause)
      ? answers['zookeeper-unavailable']
      : answers['lock-timeout'];
  }
  if (LockLostError.isInstance(error)) return answers['lock-lost'];
  if (isZooKeeperUnavailable(error)) return answers['zookeeper-unavailable'];
  return undefined;
}

/**
 * Acquires a lock through `take(signal)` only while `client` is connected: rejects at once with
 * ZkError `ConnectionLoss` when it is not (instead of waiting out `timeoutMs` against a ZooKeeper
 * out of reach), and when the connection drops during the wait, rejects at once with the
 * session's reason (`ConnectionLoss`, `SessionExpired`, `ClientClosed`) while the wait is
 * aborted (its node removed). A lease that arrives after that is released. How a request waits
 * for its lock in @zkrx/express and @zkrx/nestjs.
 *
 * ## Example
 * ```ts
 * const lease = await acquireWhileConnected(client, (signal) =>
 *   acquire(client, '/locks/orders/42', { timeoutMs: 5_000, signal }),
 * );
 * ```
 *
 * @param client The client the lock is taken with.
 * @param take Starts the acquisition with a signal that aborts it (`acquire`, `tryAcquire`, ...).
 * @param signal Aborts the wait too (the request went away, the application shuts down).
 * @return What `take` resolved (a lease, or null from a `tryAcquire`).
 */
export function acquireWhileConnected<T extends { release(): Promise<void> } | null>(
  client: ZkClient,
  take: (signal: AbortSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  // Any loss of the connection ends this view (policy `release`): the wait answers at once.
  const session = sessionOf(client, { onSuspended: 'release' });
  if (!session || session.ended) {
    return Promise.reject(
      session?.signal.reason ??
        new ZkError(ZkErrorCode.ConnectionLoss, 'not connected to ZooKeeper'),
    );
  }
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onSessionEnd = () => {
      if (settled) return;
      settled = true;
      controller.abort(session.signal.reason);
      reject(session.signal.reason);
    };
    const stopListening = onAbort(session.signal, onSessionEnd);
    take(signal ? AbortSignal.any([controller.signal, signal]) : controller.signal).then(
      (held) => {
        stopListening();
        if (!settled) {
          settled = true;
          resolve(held);
        } else if (held) {
          void held.release().catch(() => {});
        }
      },
      (error: unknown) => {
        stopListening();
        if (settled) return;
        settled = true;
        reject(error);
      },
    );
  });
}
