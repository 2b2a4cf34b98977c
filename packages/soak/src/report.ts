/**
 * How a mode's report is printed: one summary line, and the violations.
 */
import type { CheckInput } from './checker';
import { FAULT_KINDS } from './history';
import type { ModeReport } from './run';
import type { Latency } from './verdict';

const latency = (figures: Latency | undefined) =>
  figures && figures.count > 0 ? `${figures.p50}/${figures.max}` : '-';

/**
 * One line: acquisitions, faults by kind, violations, loss-signal latency and recovery by kind.
 *
 * @param report A mode's report.
 * @return The line.
 */
export function formatModeLine(report: ModeReport): string {
  const faults = FAULT_KINDS.filter((kind) => report.faults[kind])
    .map(
      (kind) =>
        `${kind} ${report.faults[kind]}${kind === 'stall' ? ` (${report.stallsAfterPing} after a ping)` : ''}`,
    )
    .join(', ');
  const losses = FAULT_KINDS.filter((kind) => report.check.stats.lossLatency[kind])
    .map((kind) => `${kind} ${latency(report.check.stats.lossLatency[kind])}`)
    .join(', ');
  const recovery = FAULT_KINDS.filter((kind) => report.recovery[kind])
    .map((kind) => `${kind} ${latency(report.recovery[kind])}`)
    .join(', ');
  const fleet = report.check.stats.fleet;
  const fleetLine = fleet
    ? `fleet: ${fleet.quietPeriods} quiet periods judged (${fleet.unbalanced} unbalanced, ${fleet.mixedPeriods} with members told different sets (${fleet.mixedFailed} failed), converged p50/max ms ${latency(fleet.convergence)}), ${fleet.changesJudged} changes made alone judged: ${fleet.moves} moves for a minimum of ${fleet.minimumMoves}, ${fleet.interruptions} interrupted; ${fleet.ownedStretches} stretches judged for unowned items (${fleet.unownedItems} unowned past the bound, all owned after p50/max ms ${latency(fleet.allOwnedAfter)})`
    : undefined;
  const violations = report.check.violations;
  const byKind = new Map<string, number>();
  for (const violation of violations)
    byKind.set(violation.kind, (byKind.get(violation.kind) ?? 0) + 1);
  return [
    `${report.mode.padEnd(10)} ${report.acquisitions} acquisitions in ${Math.round(report.durationMs / 1000)} s`,
    `violations ${violations.length}${byKind.size > 0 ? ` (${[...byKind].map(([kind, n]) => `${kind} ${n}`).join(', ')})` : ''}`,
    `faults ${Object.values(report.faults).reduce((a, b) => a + (b ?? 0), 0)} (${faults || 'none'})`,
    `loss signal p50/max ms: ${losses || '-'}`,
    `recovery after heal p50/max ms: ${recovery || '-'}; final ${latency(report.finalRecovery)}`,
    ...(fleetLine ? [fleetLine] : []),
    ...(report.faults.reconfig
      ? [`sessions lost to reconfig ${report.sessionsLostToReconfig}`]
      : []),
    `seed ${report.seed}`,
  ].join(' | ');
}

/**
 * The violations of a report, one per line (at most `limit`).
 *
 * @param report A mode's report.
 * @param limit How many to print.
 * @return The text.
 */
export function formatViolations(report: ModeReport, limit: number): string {
  const violations = report.check.violations;
  const lines = violations
    .slice(0, limit)
    .map((violation) => `  ${violation.kind}: ${violation.message}`);
  if (violations.length > limit) lines.push(`  ... and ${violations.length - limit} more`);
  return [`${report.mode}: ${violations.length} violation(s), seed ${report.seed}`, ...lines].join(
    '\n',
  );
}

/**
 * A mode's history as plain JSON: the checker's whole input (holds, register writes, faults,
 * the clocks' mapping) and ZooKeeper's record of it (every znode's life, the sessions' closes),
 * to read a violation against, or to judge again.
 *
 * @param input What the checker was given.
 * @return A JSON-ready object.
 */
export function historyJson(input: CheckInput): unknown {
  const { truth, ...rest } = input;
  return {
    ...rest,
    truth: {
      lives: truth.lives,
      sessionCloses: Object.fromEntries(truth.sessionCloses),
      containersReaped: truth.containersReaped,
      transactions: truth.transactions,
      anomalies: truth.anomalies,
    },
  };
}
