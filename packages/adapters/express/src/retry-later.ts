/**
 * The "retry later" answers the middleware gives (busy lock, ZooKeeper down, not the leader)
 * and which errors mean ZooKeeper is unavailable rather than that something is wrong.
 */
import { isZkError, ZkErrorCode } from '@zkrx/core';
import type { Response } from 'express';

/** The `error` field of the JSON bodies the middleware answers with. */
export type RetryLaterReason =
  | 'lock-busy'
  | 'lock-timeout'
  | 'zookeeper-unavailable'
  | 'not-leader';

/** Every answer's reason: the public ones, and `itemOwnerOnly`'s (of the `fleet` entry). */
type AnswerReason = RetryLaterReason | 'not-owner';

const messages: Record<AnswerReason, string> = {
  'lock-busy': 'Another request holds the lock of this resource',
  'lock-timeout': 'The lock of this resource was not acquired in time',
  'zookeeper-unavailable': 'The coordination service (ZooKeeper) is unavailable',
  'not-leader': 'This instance is not the leader',
  'not-owner': 'Another instance owns this item',
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
 * in time, session expired, throttled, client closed): the answer is 503, not a bug to report.
 *
 * ## Example
 * ```ts
 * app.use((error, request, response, next) => {
 *   if (isZooKeeperUnavailable(error)) return response.status(503).set('Retry-After', '5').end();
 *   next(error);
 * });
 * ```
 *
 * @param error Anything thrown or rejected.
 * @return True for a ZkError whose code says ZooKeeper is out of reach.
 */
export function isZooKeeperUnavailable(error: unknown): boolean {
  return isZkError(error, ...unavailableCodes);
}

/**
 * Answers `status` with `Retry-After` and a small JSON body (`error`, then `fields`, then
 * `message`); nothing if headers went already.
 */
export function answerRetryLater(
  response: Response,
  status: number,
  retryAfterSeconds: number,
  reason: AnswerReason,
  fields?: Readonly<Record<string, unknown>>,
): void {
  if (response.headersSent || response.destroyed) return;
  response
    .status(status)
    .set('Retry-After', String(retryAfterSeconds))
    .set('Cache-Control', 'no-store')
    .json({ error: reason, ...fields, message: messages[reason] });
}

/** Gives an error the HTTP `status` Express's error handling reads (unless it has one). */
export function withStatus(error: unknown, status: number): unknown {
  if (typeof error === 'object' && error !== null && !('status' in error)) {
    try {
      Object.assign(error, { status });
    } catch {
      // A frozen error keeps its shape: Express then answers 500 anyway.
    }
  }
  return error;
}
