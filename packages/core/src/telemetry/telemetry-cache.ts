/**
 * @zkrx/core/telemetry — for the zkrx packages' own telemetry (@zkrx/core's, @zkrx/lock's,
 * @zkrx/leader's): what is made from an OpenTelemetry global provider (a meter's instruments, a
 * tracer), made again only when another provider is registered.
 */

/**
 * `make(provider)` for the provider `registered()` returns now, made again only when it returns
 * another: looked up on each use (no allocation), so that an SDK registered after the first use
 * is picked up, and what the API's no-op provider made is not kept once a real one is.
 *
 * ## Example
 * ```ts
 * const tracer = perProvider(() => trace.getTracerProvider(), (provider) => provider.getTracer('@zkrx/lock'));
 * tracer().startSpan('zkrx.lock.acquire').end();
 * ```
 *
 * @param registered Reads the global provider (`metrics.getMeterProvider`, `trace.getTracerProvider`).
 * @param make Makes what is kept for one provider.
 * @return What `make` made for the provider registered now.
 */
export function perProvider<P, T>(registered: () => P, make: (provider: P) => T): () => T {
  let provider: P | undefined;
  let made: T | undefined;
  return () => {
    const now = registered();
    if (now !== provider || made === undefined) {
      provider = now;
      made = make(now);
    }
    return made;
  };
}
