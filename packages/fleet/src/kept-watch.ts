/**
 * A watch kept for as long as it is wanted: set again after it fails (no access, a reply over the
 * client's `maxFrameBytes`...), after 0.5 s, 1 s, ... up to 30 s, each failure told. What the
 * coordinator's watches on the membership and on the poison reports stand on.
 */
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { type Observable, Subscription } from 'rxjs';

const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 30_000;

/**
 * Subscribes `open()` and keeps it subscribed: after an error, `failed` is told and `open()` is
 * subscribed again later (the delay doubles with each failure in a row, and starts again after a
 * value). The client closing (`ClientClosed`) ends it. Unsubscribing the result stops it all.
 */
export function keepWatching<T>(
  open: () => Observable<T>,
  handlers: { next(value: T): void; failed(error: unknown): void },
): Subscription {
  const kept = new Subscription();
  let delay = FIRST_RETRY_MS;
  let current: Subscription | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    timer = undefined;
    if (kept.closed) return;
    let failed = false;
    const watch = open().subscribe({
      next: (value) => {
        delay = FIRST_RETRY_MS;
        handlers.next(value);
      },
      error: (error: unknown) => {
        failed = true;
        current = undefined;
        if (kept.closed || isZkError(error, ZkErrorCode.ClientClosed)) return;
        handlers.failed(error);
        timer = setTimeout(start, delay);
        timer.unref?.();
        delay = Math.min(LAST_RETRY_MS, delay * 2);
      },
    });
    if (!failed) current = watch;
  };
  kept.add(() => {
    clearTimeout(timer);
    current?.unsubscribe();
  });
  start();
  return kept;
}
