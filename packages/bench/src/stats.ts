/**
 * The numbers of a result: nearest-rank percentiles (the peers' definition) and the rounding
 * every JSON field uses.
 */

/**
 * Nearest-rank percentile: the smallest sample with at least `p`% of the samples at or below it
 * (CuratorBench.java's and kazoo_bench.py's `pct`). -1 when there are no samples.
 *
 * ## Example
 * ```ts
 * console.log(percentile([5, 1, 3, 2, 4], 50), percentile([5, 1, 3, 2, 4], 99));
 * // Output: 3 5
 * ```
 *
 * @param samples The samples (not modified).
 * @param p The percentile, 0..100.
 * @return The sample at that rank.
 */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (samples.length === 0) return -1;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] as number;
}

/** Rounds to `digits` decimals (as the peers' `round`). */
export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Milliseconds as the JSON lines carry them: 3 decimals, -1 for "no sample". */
export function ms(value: number): number {
  return value < 0 ? -1 : round(value, 3);
}
