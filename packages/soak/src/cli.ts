/**
 * `pnpm soak`: runs the soak's modes one after the other (each on a fresh ensemble), prints one
 * summary line per mode on stdout and progress on stderr; exits 1 when any mode has a violation.
 */
import { writeFileSync } from 'node:fs';
import { parseSoakArguments, SOAK_HELP } from './options';
import { freshSeed } from './random';
import { formatModeLine, formatViolations, historyJson } from './report';
import { DEFAULT_MODES, isFleetMode, type ModeReport, runMode } from './run';

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseSoakArguments(argv);
  if ('help' in parsed) {
    process.stdout.write(SOAK_HELP);
    return 0;
  }
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n\n${SOAK_HELP}`);
    return 2;
  }
  const options = parsed;
  const seed = options.seed ?? freshSeed();
  process.stderr.write(
    `soak: seed ${seed} (replay: pnpm soak --seed ${seed}${options.modes.length < DEFAULT_MODES.length ? ` --modes ${options.modes.join(',')}` : ''}), ${options.workers} workers (fleet: ${options.fleetWorkers} members, ${options.fleetItems} items), session timeout ${options.sessionTimeoutMs} ms, ${Math.round(options.faultPhaseMs / 1000)} s of faults a mode\n`,
  );
  const started = Date.now();
  const reports: ModeReport[] = [];
  const histories: Record<string, unknown> = {};
  for (const mode of options.modes) {
    const report = await runMode({
      mode,
      seed,
      workers: isFleetMode(mode) ? options.fleetWorkers : options.workers,
      fleetItems: options.fleetItems,
      sessionTimeoutMs: options.sessionTimeoutMs,
      faultPhaseMs: options.faultPhaseMs,
      meanFaultGapMs: options.meanFaultGapMs,
      coverEveryKind: true,
      reapIntervalMs: options.reapIntervalMs,
      progressAcquisitions: 3,
      progressTimeoutMs: Math.max(30_000, 6 * options.sessionTimeoutMs),
      progressEveryMs: 5_000,
      progress: (line) => process.stderr.write(`${line}\n`),
      ...(options.verbose ? { log: (line: string) => process.stderr.write(`  ${line}\n`) } : {}),
      ...(options.history
        ? {
            history: (input) => {
              histories[mode] = historyJson(input);
            },
          }
        : {}),
    });
    reports.push(report);
    // Written after each mode: a run stopped halfway keeps what it had.
    if (options.history) writeFileSync(options.history, `${JSON.stringify({ seed, histories })}\n`);
    process.stdout.write(`${formatModeLine(report)}\n`);
    if (report.check.violations.length > 0) {
      process.stderr.write(`${formatViolations(report, options.verbose ? 1_000 : 10)}\n`);
    }
  }
  const total = reports.reduce((sum, report) => sum + report.acquisitions, 0);
  const violations = reports.reduce((sum, report) => sum + report.check.violations.length, 0);
  const lost = reports.reduce((sum, report) => sum + report.sessionsLostToReconfig, 0);
  process.stdout.write(
    `total: ${total} acquisitions in ${Math.round((Date.now() - started) / 1000)} s, ${violations} violations, ${lost} sessions lost to reconfig, seed ${seed}\n`,
  );
  if (options.json) writeFileSync(options.json, `${JSON.stringify({ seed, reports }, null, 2)}\n`);
  // A replacement through reconfiguration must cost no session: a failure like a violation.
  return violations > 0 || lost > 0 ? 1 : 0;
}

const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 2;
});
process.exit(code);
