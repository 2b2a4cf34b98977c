/**
 * The command line of a bench tool (`dist/tools/*.js`): `--help` prints its usage and exits 0;
 * an unknown option or a bad value prints what is wrong and the usage, and exits 2 — never a
 * stack trace. Every option is a string with a default; `count` reads one as an integer.
 */
import { integer, parseStrict, UsageError } from '../options';

/** What a tool reads from its command line. */
export interface ToolArgs<Names extends string> {
  /** The option's value, or its default. */
  readonly text: (name: Names) => string;
  /** The option as an integer >= `min`, or the tool exits with its usage. */
  readonly count: (name: Names, min: number) => number;
  /** The option as a comma-separated list, each entry one of `allowed`. */
  readonly list: <Entry extends string>(name: Names, allowed: readonly Entry[]) => Entry[];
  /** The option as a comma-separated list of integers >= `min`. */
  readonly counts: (name: Names, min: number) => number[];
  /** The option as a number >= 0. */
  readonly seconds: (name: Names) => number;
}

/**
 * Parses `argv` (default: the process's arguments) against `defaults`, or exits as above.
 *
 * ## Example
 * ```ts
 * const args = toolArgs('usage: tool [--rounds 5]', { rounds: '5' }, ['--rounds', '2']);
 * console.log(args.count('rounds', 1));
 * // Output: 2
 * ```
 */
export function toolArgs<Names extends string>(
  usage: string,
  defaults: Record<Names, string>,
  argv: readonly string[] = process.argv.slice(2),
): ToolArgs<Names> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseStrict(argv, {
      help: { type: 'boolean' },
      ...Object.fromEntries(
        Object.entries<string>(defaults).map(([name, value]) => [
          name,
          { type: 'string' as const, default: value },
        ]),
      ),
    });
  } catch (error) {
    return exitWithUsage(usage, (error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
  const text = (name: Names) => values[name] as string;
  const integerOf = (name: Names, value: string, min: number) => {
    try {
      return integer(name, value, min) as number;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      return exitWithUsage(usage, error.message);
    }
  };
  const entries = (name: Names) => text(name).split(',').filter(Boolean);
  return {
    text,
    count: (name, min) => integerOf(name, text(name), min),
    counts: (name, min) => entries(name).map((entry) => integerOf(name, entry, min)),
    list: (name, allowed) =>
      entries(name).map((entry) =>
        (allowed as readonly string[]).includes(entry)
          ? (entry as (typeof allowed)[number])
          : exitWithUsage(
              usage,
              `--${name}: unknown ${JSON.stringify(entry)} (${allowed.join(', ')})`,
            ),
      ),
    seconds: (name) => {
      const value = Number(text(name));
      if (Number.isFinite(value) && value >= 0) return value;
      return exitWithUsage(
        usage,
        `--${name} must be a number >= 0, got ${JSON.stringify(text(name))}`,
      );
    },
  };
}

function exitWithUsage(usage: string, message: string): never {
  process.stderr.write(`${message}\n\n${usage.trim()}\n`);
  process.exit(2);
}
