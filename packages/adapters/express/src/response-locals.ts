/**
 * What a middleware hands the handlers after it through `res.locals` (a request's lease, its
 * owned item), read back typed, with an error naming the middleware that did not run.
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
