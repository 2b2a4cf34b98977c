/**
 * The command line of `pnpm soak`: modes, seed, fleet size and timings, with the defaults of
 * the bounded default run (>= 10,000 acquisitions in <= 10 minutes on 2 cores).
 */
import { CONTROL_MODES, DEFAULT_MODES, EXTRA_MODES, type SoakMode } from './run';

export interface SoakOptions {
  readonly modes: readonly SoakMode[];
  readonly seed: number | undefined;
  readonly workers: number;
  /** Fleet modes: the members (worker processes), and the first item set's size. */
  readonly fleetWorkers: number;
  readonly fleetItems: number;
  readonly sessionTimeoutMs: number;
  readonly faultPhaseMs: number;
  readonly meanFaultGapMs: number;
  readonly reapIntervalMs: number;
  readonly json: string | undefined;
  readonly history: string | undefined;
  readonly verbose: boolean;
}

export const DEFAULT_SOAK_OPTIONS: SoakOptions = {
  modes: DEFAULT_MODES,
  seed: undefined,
  workers: 8,
  fleetWorkers: 20,
  fleetItems: 1_000,
  sessionTimeoutMs: 3_000,
  faultPhaseMs: 70_000,
  meanFaultGapMs: 2_500,
  reapIntervalMs: 100,
  json: undefined,
  history: undefined,
  verbose: false,
};

export const SOAK_HELP = `pnpm soak [options]

Worker processes take locks on a real 3-server ZooKeeper ensemble behind fault proxies while a
seeded nemesis injects faults; a checker judges the history against ZooKeeper's transaction log.
One summary line per mode on stdout, progress on stderr; exit 1 on any violation.

  --modes a,b,...        ${[...DEFAULT_MODES, ...EXTRA_MODES, ...CONTROL_MODES].join(', ')} (default: ${DEFAULT_MODES.join(',')};
                         deploy-fleet (a rolling deploy that changes the set) and boot-fleet (the
                         fleet joins with every server down) run when named; broken, deaf,
                         broken-fleet, slow-fleet and stale-fleet are positive controls: they must fail)
  --seed N               replay a run's fault plan (printed at start)
  --workers N            worker processes (default 8)
  --fleet-workers N      the fleet modes' members, one worker process each (default 20)
  --fleet-items N        the fleet modes' first item set (default 1000)
  --session-timeout MS   the workers' session timeout (default 3000)
  --duration S           seconds of faults per mode (default 75)
  --fault-gap MS         mean time between fault starts (default 2500)
  --reap-interval MS     ZooKeeper's container check interval (default 100)
  --json FILE            write the full reports as JSON
  --history FILE         write each mode's history (holds, writes, faults, ZooKeeper's
                         znode lives: what the checker judged) as JSON
  --verbose              every fault and every violation on stderr
`;

const ALL_MODES: readonly SoakMode[] = [...DEFAULT_MODES, ...EXTRA_MODES, ...CONTROL_MODES];

/**
 * Parses `pnpm soak`'s arguments.
 *
 * @param argv The arguments after the script.
 * @return The options, `{ help: true }`, or `{ error }`.
 */
export function parseSoakArguments(
  argv: readonly string[],
): SoakOptions | { help: true } | { error: string } {
  const options: { -readonly [K in keyof SoakOptions]: SoakOptions[K] } = {
    ...DEFAULT_SOAK_OPTIONS,
  };
  const number = (
    name: string,
    value: string | undefined,
    min: number,
  ): number | { error: string } => {
    const parsed = Number(value);
    if (value === undefined || !Number.isFinite(parsed) || parsed < min) {
      return { error: `${name} needs a number >= ${min}, got ${value ?? 'nothing'}` };
    }
    return parsed;
  };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    const value = argv[index + 1];
    const take = (name: string, min: number): number | { error: string } => {
      index += 1;
      return number(name, value, min);
    };
    let parsed: number | { error: string } = 0;
    switch (argument) {
      case '--':
        continue;
      case '--help':
      case '-h':
        return { help: true };
      case '--verbose':
        options.verbose = true;
        continue;
      case '--modes': {
        index += 1;
        const modes = (value ?? '').split(',').filter(Boolean);
        const unknown = modes.filter((mode) => !ALL_MODES.includes(mode as SoakMode));
        if (modes.length === 0 || unknown.length > 0) {
          return { error: `--modes: unknown ${unknown.join(', ') || '(none given)'}` };
        }
        options.modes = modes as SoakMode[];
        continue;
      }
      case '--json':
      case '--history':
        index += 1;
        if (!value) return { error: `${argument} needs a file` };
        if (argument === '--json') options.json = value;
        else options.history = value;
        continue;
      case '--seed':
        parsed = take('--seed', 0);
        if (typeof parsed === 'number') options.seed = Math.floor(parsed) >>> 0;
        break;
      case '--workers':
        parsed = take('--workers', 2);
        if (typeof parsed === 'number') options.workers = Math.floor(parsed);
        break;
      case '--fleet-workers':
        parsed = take('--fleet-workers', 2);
        if (typeof parsed === 'number') options.fleetWorkers = Math.floor(parsed);
        break;
      case '--fleet-items':
        parsed = take('--fleet-items', 1);
        if (typeof parsed === 'number') options.fleetItems = Math.floor(parsed);
        break;
      case '--session-timeout':
        parsed = take('--session-timeout', 1_000);
        if (typeof parsed === 'number') options.sessionTimeoutMs = parsed;
        break;
      case '--duration':
        parsed = take('--duration', 1);
        if (typeof parsed === 'number') options.faultPhaseMs = parsed * 1000;
        break;
      case '--fault-gap':
        parsed = take('--fault-gap', 100);
        if (typeof parsed === 'number') options.meanFaultGapMs = parsed;
        break;
      case '--reap-interval':
        parsed = take('--reap-interval', 10);
        if (typeof parsed === 'number') options.reapIntervalMs = parsed;
        break;
      default:
        return { error: `unknown argument ${argument}` };
    }
    if (typeof parsed !== 'number') return parsed;
  }
  return options;
}
