/**
 * Interleaved rounds: each row's best round, and the ratios of zkrx's rows to its peers' on the
 * transport scenarios (the JSON lines keep every round).
 */
import type { ResultLine } from './single-run';
import { round } from './stats';

/** The scenarios whose goal is a latency (p50): their best round is the lowest p50. */
const LATENCY_GOALS = new Set(['floor-create-delete', 'floor-getchildren']);

function key(line: ResultLine): string {
  return `${line.scenario}/${line.clients}/${line.impl}`;
}

function better(a: ResultLine, b: ResultLine): boolean {
  if (a.error !== undefined) return false;
  if (b.error !== undefined) return true;
  if (LATENCY_GOALS.has(String(a.scenario))) return Number(a.p50_ms) < Number(b.p50_ms);
  return Number(a.ops_per_s) > Number(b.ops_per_s);
}

/**
 * Each row's best round, in the order rows first appear: the lowest p50 for the floors (their
 * goal is a latency), the highest ops/s otherwise; a failed round only when all failed. The line
 * gets `rounds` (how many ran) and `best_round`.
 *
 * ## Example
 * ```ts
 * const best = bestRounds([
 *   { scenario: 'pipelined-get', clients: 1, impl: 'zkrx', ops_per_s: 10, round: 1 },
 *   { scenario: 'pipelined-get', clients: 1, impl: 'zkrx', ops_per_s: 12, round: 2 },
 * ]);
 * console.log(best[0]?.ops_per_s, best[0]?.best_round);
 * // Output: 12 2
 * ```
 */
export function bestRounds(lines: readonly ResultLine[]): ResultLine[] {
  const best = new Map<string, { line: ResultLine; count: number }>();
  for (const line of lines) {
    const held = best.get(key(line));
    if (!held) best.set(key(line), { line, count: 1 });
    else
      best.set(key(line), {
        line: better(line, held.line) ? line : held.line,
        count: held.count + 1,
      });
  }
  return [...best.values()].map(({ line, count }) => ({
    ...line,
    rounds: count,
    best_round: line.round ?? 1,
  }));
}

/** One comparison of zkrx with a peer on one scenario. */
export interface Ratio {
  readonly scenario: string;
  readonly peer: string;
  /** zkrx / peer, each from its best round. */
  readonly opsPerS: number;
  readonly p50: number;
  /** zkrx / peer client CPU per op (user + system); undefined when a side lacks it. */
  readonly clientCpu: number | undefined;
}

/**
 * zkrx's best rows against each peer's on the same scenario and client count.
 *
 * ## Example
 * ```ts
 * const ratios = transportRatios([
 *   { scenario: 'pipelined-get', clients: 1, impl: 'zkrx', ops_per_s: 30, p50_ms: 1, client_cpu_us_per_op: 10 },
 *   { scenario: 'pipelined-get', clients: 1, impl: 'node-zookeeper-client', ops_per_s: 20, p50_ms: 2, client_cpu_us_per_op: 25 },
 * ]);
 * console.log(ratios[0]);
 * // Output: { scenario: 'pipelined-get', peer: 'node-zookeeper-client', opsPerS: 1.5, p50: 0.5, clientCpu: 0.4 }
 * ```
 */
export function transportRatios(best: readonly ResultLine[]): Ratio[] {
  const ratios: Ratio[] = [];
  const ok = best.filter((line) => line.error === undefined);
  for (const zkrx of ok.filter((line) => line.impl === 'zkrx' || line.impl === 'zkrx-native')) {
    for (const peer of ok) {
      if (peer.impl === 'zkrx' || peer.impl === 'zkrx-native') continue;
      if (peer.scenario !== zkrx.scenario || peer.clients !== zkrx.clients) continue;
      const cpu =
        zkrx.client_cpu_us_per_op !== undefined && peer.client_cpu_us_per_op !== undefined
          ? round(Number(zkrx.client_cpu_us_per_op) / Number(peer.client_cpu_us_per_op), 2)
          : undefined;
      ratios.push({
        scenario: String(zkrx.scenario),
        peer: String(peer.impl),
        opsPerS: round(Number(zkrx.ops_per_s) / Number(peer.ops_per_s), 2),
        p50: round(Number(zkrx.p50_ms) / Number(peer.p50_ms), 2),
        clientCpu: cpu,
      });
    }
  }
  return ratios;
}

/** The ratios as a markdown table. */
export function ratioTable(ratios: readonly Ratio[]): string {
  return [
    '| scenario | zkrx against | ops/s ratio | p50 ratio | client CPU per op ratio |',
    '|---|---|---|---|---|',
    ...ratios.map(
      (ratio) =>
        `| ${ratio.scenario} | ${ratio.peer} | ${ratio.opsPerS}× | ${ratio.p50}× | ${
          ratio.clientCpu === undefined ? '' : `${ratio.clientCpu}×`
        } |`,
    ),
  ].join('\n');
}
