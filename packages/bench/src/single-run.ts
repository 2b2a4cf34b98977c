/**
 * One run of one scenario against a running server: the result as the peers' JSON line
 * (`impl`, `scenario`, `clients`, `ops`, `seconds`, `ops_per_s`, `p50_ms`, `p99_ms`,
 * `server_packets_sent_per_op`, then the scenario's own fields and `warmup_ops`).
 */
import type { BenchOptions, ScenarioName } from './options';
import {
  BenchExit,
  implLabel,
  type Measured,
  RunContext,
  type RunOutput,
  type RunSettings,
} from './run-context';
import { scenarios } from './scenario-registry';
import { ms, percentile, round } from './stats';

/** One result line. */
export type ResultLine = Record<string, string | number>;

/** How a run ended: its exit status, and its JSON line when it finished. */
export interface RunOutcome {
  readonly code: number;
  readonly line?: ResultLine;
  /** The failure's message (the first STALLED / EXCLUSION VIOLATED / error line). */
  readonly error?: string;
}

/** The settings of one run: the options, with the scenario's defaults for what was not given. */
export function runSettings(
  options: BenchOptions,
  name: ScenarioName,
  connect: string,
  clients?: number,
  ops?: number,
): RunSettings {
  const scenario = scenarios[name];
  const asked = clients ?? options.clients ?? scenario.defaultClients;
  const count = scenario.clientsFor ? scenario.clientsFor(asked) : asked;
  const total = ops ?? options.ops ?? scenario.defaultOps;
  return {
    connect,
    scenario: name,
    impl: options.impl,
    inFlight: options.inFlight,
    dataBytes: options.dataBytes,
    clients: count,
    ops: total,
    warmup: options.warmup ?? scenario.warmupFor(total),
    warmupHoldMs: options.warmupHoldMs ?? scenario.warmupHoldMs,
    stallSeconds: Math.max(options.stallSeconds, scenario.minStallSeconds ?? 0),
    selfTestBroken: options.selfTestBroken,
    selfTestStall: options.selfTestStall,
    processes: options.processes,
    nameBytes: options.nameBytes,
    bootSeconds: options.bootSeconds,
    fleetSteps: options.fleetSteps,
    form: options.form,
    oneClient: options.oneClient,
    timeoutMs: options.timeoutMs,
  };
}

/**
 * The line's `impl`: the client's name, with the lock scenarios' variant when it is not the
 * default (`zkrx (observable, one client)`), so that the variants are rows of their own.
 */
export function variantLabel(settings: RunSettings): string {
  const variant: string[] = [];
  if (settings.form !== 'acquire') variant.push(settings.form);
  if (settings.oneClient) variant.push('one client');
  if (settings.timeoutMs !== undefined) variant.push(`timeoutMs ${settings.timeoutMs}`);
  const name = implLabel(settings.impl);
  return variant.length === 0 ? name : `${name} (${variant.join(', ')})`;
}

/**
 * The CPU fields of a line: this process's (user + system, and each) and the server's, in µs per
 * op, when the server runs on this machine.
 */
export function cpuFields(measured: Measured, ops: number): ResultLine {
  if (!measured.clientCpuMicros) return {};
  const { user, system } = measured.clientCpuMicros;
  const fields: ResultLine = {
    client_cpu_us_per_op: round((user + system) / ops, 2),
    client_user_us_per_op: round(user / ops, 2),
    client_system_us_per_op: round(system / ops, 2),
  };
  if (measured.serverCpuMicros !== undefined) {
    fields.server_cpu_us_per_op = round(measured.serverCpuMicros / ops, 2);
  }
  return fields;
}

/**
 * Runs one scenario in fresh sessions under a fresh path, then closes them and removes the path
 * (also after a failure, within bounds).
 */
export async function runOne(settings: RunSettings, output: RunOutput): Promise<RunOutcome> {
  const scenario = scenarios[settings.scenario];
  const context = new RunContext(settings, output);
  try {
    await context.start();
    context.log(
      `${settings.ops} ops, warm-up ${settings.warmup}` +
        (settings.warmupHoldMs > 0 ? ` (hold ${settings.warmupHoldMs} ms)` : '') +
        ` on ${settings.connect} under ${context.base}`,
    );
    const result = await context.guard(scenario.run(context));
    const seconds = result.elapsedMs / 1000;
    const line: ResultLine = {
      impl: variantLabel(settings),
      scenario: settings.scenario,
      clients: result.clients,
      ops: settings.ops,
      seconds: round(seconds, 3),
      ops_per_s: round(settings.ops / seconds, 1),
      p50_ms: ms(percentile(result.latencies, 50)),
      p99_ms: ms(percentile(result.latencies, 99)),
      server_packets_sent_per_op: round(result.packets / settings.ops, 2),
      ...cpuFields(result, settings.ops),
      ...result.extra,
      warmup_ops: settings.warmup,
      ...(settings.form === 'acquire' ? {} : { form: settings.form }),
      ...(settings.oneClient ? { one_client: 'true' } : {}),
      ...(settings.timeoutMs === undefined ? {} : { timeout_ms: settings.timeoutMs }),
    };
    return { code: 0, line };
  } catch (error) {
    context.fail(error);
    if (error instanceof BenchExit) return { code: error.code, error: error.message };
    output.stderr(
      `Error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return { code: 1, error: `Error: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    await context.close();
  }
}
