/**
 * The markdown table of a set of result lines (the columns of the peers' table.py, with notes
 * for the scenarios only zkrx runs: herd and memory).
 */
import type { ResultLine } from './single-run';

function cell(value: string | number | undefined): string {
  return value === undefined ? '' : String(value);
}

/** The notes column: failures, the best round, CPU, holders and readers, herd and memory figures. */
export function notes(line: ResultLine): string {
  const parts: string[] = [];
  if (line.error !== undefined) parts.push(`**FAILED** ${String(line.error).slice(0, 100)}`);
  if (Number(line.rounds) > 1) {
    parts.push(`best of ${line.rounds} (round ${line.best_round}, load ${line.load_1m})`);
  }
  if (line.max_concurrent_holders !== undefined) {
    parts.push(`max holders ${line.max_concurrent_holders}`);
  }
  if (line.max_concurrent_readers !== undefined) {
    parts.push(
      `max readers ${line.max_concurrent_readers}, read/write p50 ${cell(line.read_p50_ms)}/${cell(line.write_p50_ms)} ms`,
    );
  }
  if (line.waiters !== undefined) {
    parts.push(
      `${line.waiters} waiters queued; whole queue drained at ${cell(line.drain_packets_per_release)} pkts/release`,
    );
  }
  if (line.client_cpu_us_per_op !== undefined) {
    parts.push(
      `client CPU ${line.client_cpu_us_per_op} µs/op` +
        (line.server_cpu_us_per_op === undefined ? '' : `, server ${line.server_cpu_us_per_op}`),
    );
  }
  if (line.ops_per_read !== undefined) {
    parts.push(
      `${line.in_flight} in flight; ${line.ops_per_read} replies/read, ${line.ops_per_write} requests/write`,
    );
  }
  if (line.heap_bytes_per_waiter !== undefined) {
    parts.push(
      `per pending acquire(): heap ${line.heap_bytes_per_waiter} B, RSS ${line.rss_bytes_per_waiter} B ` +
        `(retained after: ${line.retained_heap_bytes_per_waiter} B); queueing ${line.ops} took ` +
        `${line.enqueue_seconds} s, ${line.enqueue_packets_per_waiter} pkts/waiter`,
    );
  }
  return parts.join('; ');
}

/**
 * Renders result lines as a markdown table, in the order given.
 *
 * ## Example
 * ```ts
 * console.log(markdownTable([{ impl: 'zkrx', scenario: 'herd', clients: 10, ops: 30, ops_per_s: 900 }]).split('\n')[2]);
 * // Output: | herd | 10 | zkrx | 30 | 900 | ...
 * ```
 */
export function markdownTable(lines: readonly ResultLine[]): string {
  const head = [
    'scenario',
    'C',
    'impl',
    'ops',
    'ops/s',
    'p50 ms',
    'p99 ms',
    'handoff p50/p99 ms',
    'srv pkts/op',
    'notes',
  ];
  const rows = lines.map((line) => [
    cell(line.scenario),
    cell(line.clients),
    cell(line.impl),
    cell(line.ops),
    cell(line.ops_per_s),
    cell(line.p50_ms),
    cell(line.p99_ms),
    line.handoff_p50_ms === undefined ? '' : `${line.handoff_p50_ms} / ${line.handoff_p99_ms}`,
    cell(line.server_packets_sent_per_op),
    notes(line),
  ]);
  return [
    `| ${head.join(' | ')} |`,
    `|${'---|'.repeat(head.length)}`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}
