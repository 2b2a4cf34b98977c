/**
 * The "retry later" answers the middleware gives: a lock in the way (the answers of @zkrx/lock's
 * `retryLaterOf`, which @zkrx/nestjs gives too), not the leader, not the item's owner.
 */
import type { Response } from 'express';

/** What an answer says: the body's `error` and `message`. */
export interface Answer {
  readonly reason: string;
  readonly message: string;
}

/** `leaderOnly`'s answer on an instance that does not lead. */
export const notLeader: Answer = {
  reason: 'not-leader',
  message: 'This instance is not the leader',
};

/** `itemOwnerOnly`'s answer on an instance that does not own the item. */
export const notOwner: Answer = {
  reason: 'not-owner',
  message: 'Another instance owns this item',
};

/**
 * Answers `status` with `Retry-After` and a small JSON body (`error`, then `fields`, then
 * `message`); nothing if headers went already.
 */
export function answerRetryLater(
  response: Response,
  status: number,
  retryAfterSeconds: number,
  answer: Answer,
  fields?: Readonly<Record<string, unknown>>,
): void {
  if (response.headersSent || response.destroyed) return;
  response
    .status(status)
    .set('Retry-After', String(retryAfterSeconds))
    .set('Cache-Control', 'no-store')
    .json({ error: answer.reason, ...fields, message: answer.message });
}

/**
 * Gives an error the HTTP `status` Express's error handling reads (unless it has one) and, with
 * `retryAfterSeconds`, the `headers` Express's final handler sets (`Retry-After`,
 * `Cache-Control: no-store`), so that it answers as the middleware and @zkrx/nestjs do.
 */
export function withStatus(error: unknown, status: number, retryAfterSeconds?: number): unknown {
  if (typeof error === 'object' && error !== null && !('status' in error)) {
    try {
      Object.assign(error, { status });
      if (retryAfterSeconds !== undefined && !('headers' in error)) {
        Object.assign(error, {
          headers: { 'Retry-After': String(retryAfterSeconds), 'Cache-Control': 'no-store' },
        });
      }
    } catch {
      // A frozen error keeps its shape: Express then answers 500 anyway.
    }
  }
  return error;
}
