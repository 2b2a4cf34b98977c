/**
 * What the middleware knows of a response: what an earlier middleware put in `res.locals` (a
 * request's lease, its owned item), and when the response has ended.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';
import type { Response } from 'express';

/**
 * `response.locals[key]`, set by a middleware earlier in the chain.
 *
 * @param response The response of the request.
 * @param key Where the middleware put it.
 * @param missing The message of the ZkError `BadArguments` thrown when nothing is there.
 * @return What the middleware put there.
 */
export function localOf<T>(response: Response, key: string | symbol, missing: string): T {
  const value = (response.locals as Record<string | symbol, unknown>)[key];
  if (!value) throw new ZkError(ZkErrorCode.BadArguments, missing);
  return value as T;
}

/**
 * Resolves once the response has ended: sent (`finish`) or its connection closed (`close`),
 * whichever comes first — how long a request the middleware let through is kept in view.
 *
 * @param response The response.
 * @return Resolves at its end.
 */
export function responseEnded(response: Response): Promise<void> {
  return new Promise<void>((resolve) => {
    response.once('finish', resolve);
    response.once('close', resolve);
  });
}
