/**
 * Abort listeners with one real listener per signal. A signal shared by many calls — a shutdown
 * signal passed to every request of a service — would otherwise carry one `abort` listener per
 * call in flight (two with a transport's), and Node warns of a leak past ten
 * (`MaxListenersExceededWarning`) on a signal that is simply shared.
 */

const listenersOf = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `listener` once when `signal` aborts, as `addEventListener('abort', listener, { once:
 * true })` does, but with one listener on the signal however many are added: listeners run in
 * the order they were added (adding one again moves it last), one removed before its turn does
 * not run, one added once the signal has aborted never runs. An error a listener throws is
 * reported as uncaught, as the EventTarget does, and does not stop the others.
 *
 * ## Example
 * ```ts
 * const shutdown = new AbortController();
 * const stop = onAbort(shutdown.signal, () => console.log('shutting down'));
 * shutdown.abort();
 * stop(); // no-op once it ran
 * // Output: shutting down
 * ```
 *
 * @param signal The signal to listen to.
 * @param listener Called once, when the signal aborts.
 * @return Removes the listener (idempotent).
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let listeners = listenersOf.get(signal);
  if (listeners === undefined) {
    const added = new Set<() => void>();
    listeners = added;
    listenersOf.set(signal, added);
    signal.addEventListener(
      'abort',
      () => {
        listenersOf.delete(signal);
        // Those present when the signal aborted, in order; one removed meanwhile is skipped.
        for (const each of [...added]) {
          if (!added.delete(each)) continue;
          try {
            each();
          } catch (error) {
            queueMicrotask(() => {
              throw error;
            });
          }
        }
      },
      { once: true },
    );
  }
  const set = listeners;
  set.delete(listener);
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}
