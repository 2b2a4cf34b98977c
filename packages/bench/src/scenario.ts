/**
 * What a scenario is: its defaults (clients, ops, warm-up, hold) and its run over a RunContext.
 */
import type { ScenarioName } from './options';
import type { RunContext, ScenarioResult } from './run-context';

export interface Scenario {
  readonly name: ScenarioName;
  /** One line for the help and the table's notes. */
  readonly summary: string;
  /** Clients when `--clients` is not given. */
  readonly defaultClients: number;
  /** Ops when `--ops` is not given. */
  readonly defaultOps: number;
  /** Warm-up ops for `ops` measured ops when `--warmup` is not given (peers: max(20, N/4)). */
  warmupFor(ops: number): number;
  /** Hold in the critical section during warm-up when `--warmup-hold-ms` is not given. */
  readonly warmupHoldMs: number;
  /**
   * The stall watchdog's limit at least (fleet-scale waits out a session timeout with nothing
   * happening).
   */
  readonly minStallSeconds?: number;
  /** Fixes the client count (memory always runs 2 sessions). */
  clientsFor?(asked: number): number;
  run(context: RunContext): Promise<ScenarioResult>;
}

/** The peers' warm-up: a quarter of the measured ops, at least 20. */
export function quarterWarmup(ops: number): number {
  return Math.max(20, Math.floor(ops / 4));
}
