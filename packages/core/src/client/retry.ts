/**
 * Retry policies for idempotent calls that lost their connection: bounded exponential backoff
 * with jitter by default.
 */
import type { ZkError } from '../errors/errors';

/** Decides whether, and after how long, a failed idempotent call is tried again. */
export interface RetryPolicy {
  /**
   * @param retry 1 for the first retry, 2 for the second...
   * @param elapsedMs Time since the first attempt started.
   * @param error Why the last attempt failed (always retryable).
   * @return The delay before the next attempt, or `undefined` to give up.
   */
  nextDelayMs(retry: number, elapsedMs: number, error: ZkError): number | undefined;
}

export interface ExponentialBackoffOptions {
  /** Delay before the first retry. Default 50 ms. */
  baseDelayMs?: number;
  /** Largest delay between two attempts. Default 2 s. */
  maxDelayMs?: number;
  /** Most retries of one call. Default 10. */
  maxRetries?: number;
  /** Give up once this long has passed since the first attempt. Default 30 s. */
  maxElapsedMs?: number;
  /** Spread delays randomly over [delay/2, delay] so clients don't retry in step. Default true. */
  jitter?: boolean;
}

/**
 * Bounded exponential backoff: base, 2×base, 4×base... capped at `maxDelayMs`, at most
 * `maxRetries` times and for at most `maxElapsedMs`.
 *
 * ## Example
 * ```ts
 * const client = createClient({ connect, retry: exponentialBackoff({ maxRetries: 3 }) });
 * ```
 *
 * @param options Bounds of the backoff.
 * @return The policy.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): RetryPolicy {
  const base = options.baseDelayMs ?? 50;
  const max = options.maxDelayMs ?? 2_000;
  const maxRetries = options.maxRetries ?? 10;
  const maxElapsed = options.maxElapsedMs ?? 30_000;
  const jitter = options.jitter ?? true;
  return {
    nextDelayMs(retry, elapsedMs) {
      if (retry > maxRetries || elapsedMs >= maxElapsed) return undefined;
      const delay = Math.min(max, base * 2 ** (retry - 1));
      const spread = jitter ? delay / 2 + Math.random() * (delay / 2) : delay;
      return Math.min(spread, Math.max(0, maxElapsed - elapsedMs));
    },
  };
}

/** Never retries: every ConnectionLoss reaches the caller. */
export const noRetry: RetryPolicy = { nextDelayMs: () => undefined };
