/**
 * What a check finds: the violations of the rules, and latency figures (ms). Shared by the lock
 * rules (checker.ts) and the fleet rules (partition-check.ts).
 */

export type ViolationKind =
  | 'admission'
  | 'overlap'
  | 'stale-belief'
  | 'late-loss'
  | 'unknown-node'
  | 'node-after-belief'
  | 'token-mismatch'
  | 'token-order'
  | 'register'
  | 'fence'
  | 'leftover'
  | 'no-progress'
  | 'crash'
  | 'truth'
  /** Fleet mode (partition-check.ts). */
  | 'balance'
  | 'stickiness'
  | 'unowned'
  | 'item-sets';

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
  readonly holds?: readonly string[];
}

/** Latency figures of one group (ms). */
export interface Latency {
  count: number;
  p50: number;
  max: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index] as number;
}

/** Latency figures of a list of values. */
export function latencyOf(values: readonly number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: Math.round(percentile(sorted, 0.5)),
    max: Math.round(sorted.at(-1) ?? 0),
  };
}
