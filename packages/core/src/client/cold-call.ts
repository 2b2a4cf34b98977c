/**
 * The observable form of a call: cold (it runs on subscribe), and aborted by unsubscribing — a
 * request not sent yet is withdrawn — with the caller's own `signal` too.
 */
import { Observable } from 'rxjs';
import { ZkError, ZkErrorCode } from '../errors/errors';
import type { CallOptions } from './call-runner';

/** `options` with `signal` added (the observable's own, aborted on unsubscribe). */
export function withSignal<O extends CallOptions>(options: O | undefined, signal: AbortSignal): O {
  // Not options at all: passed on as they are, for the call's checks to refuse.
  if (options !== undefined && (typeof options !== 'object' || options === null)) return options;
  const given = options?.signal;
  return { ...options, signal: given ? AbortSignal.any([given, signal]) : signal } as O;
}

/**
 * A cold observable of one call: runs it on subscribe; unsubscribing aborts it (a request not
 * sent yet is withdrawn) and ignores its result.
 */
export function cold<T>(start: (signal: AbortSignal) => Promise<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let active = true;
    start(controller.signal).then(
      (value) => {
        if (!active) return;
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        if (active) subscriber.error(error);
      },
    );
    return () => {
      if (!active) return;
      active = false;
      controller.abort(new ZkError(ZkErrorCode.Aborted, 'unsubscribed'));
    };
  });
}
