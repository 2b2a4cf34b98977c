/**
 * The command line of `zkrx`: which command, its path or node, and its options — checked, with
 * a usage error that says what to type instead.
 */
import { parseArgs } from 'node:util';
import { CliError, CliErrorCode } from './errors';

export const COMMANDS = [
  'locks',
  'leaders',
  'members',
  'partitions',
  'release',
  'revoke',
  'console',
  'dev-server',
  'help',
] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Where zkrx connects when neither `--connect` nor `ZK_CONNECT` says. */
export const DEFAULT_CONNECT = '127.0.0.1:2181';
/** How long zkrx tries to connect by default. */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface ParsedCommandLine {
  /** The command; undefined for `zkrx` alone, `--help` or `--version`. */
  readonly command: CommandName | undefined;
  /** The path (locks, leaders, members, partitions), node (release, revoke) or command (help). */
  readonly target: string | undefined;
  readonly connect: string;
  readonly timeoutMs: number;
  readonly json: boolean;
  readonly watch: boolean;
  readonly force: boolean;
  readonly yes: boolean;
  /** `dev-server --port`, `console --port`. */
  readonly port: number | undefined;
  /** `console --host`: the address to listen on. */
  readonly host: string | undefined;
  /** `console --actions`: offer release and revoke, behind a token. */
  readonly actions: boolean;
  readonly help: boolean;
  readonly version: boolean;
  /** False with `--no-color` (or `NO_COLOR`); else colours on a terminal. */
  readonly colour: boolean;
}

const options = {
  connect: { type: 'string', short: 'c' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  watch: { type: 'boolean', short: 'w' },
  force: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  port: { type: 'string' },
  host: { type: 'string' },
  actions: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  'no-color': { type: 'boolean' },
} as const;

type OptionName = keyof typeof options;

/** The options each command takes besides the common ones. */
const commandOptions: Record<CommandName, readonly OptionName[]> = {
  locks: ['json', 'watch'],
  leaders: ['json', 'watch'],
  members: ['json', 'watch'],
  partitions: ['json', 'watch'],
  release: ['force', 'yes'],
  revoke: [],
  console: ['port', 'host', 'actions'],
  'dev-server': ['port'],
  help: [],
};
const common: readonly OptionName[] = ['connect', 'timeout', 'help', 'version', 'no-color'];

function usage(message: string): CliError {
  return new CliError(CliErrorCode.BadUsage, message);
}

/** Parses `argv` (without `node` and the script); throws CliError `BadUsage`. */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedCommandLine {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    const text = (error as Error).message.replace(/\. To specify a positional.*$/s, '');
    throw usage(`${text} (zkrx --help lists the options)`);
  }
  const { values, positionals } = parsed;
  const [first, target, ...extra] = positionals;
  let command: CommandName | undefined;
  if (first !== undefined) {
    if (!(COMMANDS as readonly string[]).includes(first)) {
      throw usage(`zkrx has no command "${first}": use ${COMMANDS.join(', ')} (zkrx --help)`);
    }
    command = first as CommandName;
  }
  if (extra.length > 0) {
    throw usage(`zkrx ${command}: unexpected argument "${extra[0]}" (zkrx ${command} --help)`);
  }
  if (command === undefined && target !== undefined) {
    throw usage(`unexpected argument "${target}" (zkrx --help)`);
  }
  if (command !== undefined) {
    // dev-server connects to nothing: of the common options, only help, version and colour.
    const shared = command === 'dev-server' ? common.slice(2) : common;
    const allowed = new Set([...shared, ...commandOptions[command]]);
    for (const name of Object.keys(values) as OptionName[]) {
      if (!allowed.has(name)) {
        throw usage(`zkrx ${command} does not take --${name} (zkrx ${command} --help)`);
      }
    }
  }
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (values.timeout !== undefined) {
    timeoutMs = Number(values.timeout);
    if (!/^\d+$/.test(values.timeout) || timeoutMs < 1) {
      throw usage(`--timeout takes milliseconds, a whole number above 0: got "${values.timeout}"`);
    }
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    // 0 (any free port) only for the console, which says where it listens.
    const lowest = command === 'console' ? 0 : 1;
    if (!/^\d+$/.test(values.port) || port < lowest || port > 65_535) {
      throw usage(`--port takes a TCP port, ${lowest} to 65535: got "${values.port}"`);
    }
  }
  const connect = values.connect ?? env.ZK_CONNECT ?? DEFAULT_CONNECT;
  if (connect.trim() === '') {
    throw usage('--connect (or ZK_CONNECT) is empty: give host:port[,host:port...][/chroot]');
  }
  return {
    command,
    target,
    connect,
    timeoutMs,
    json: values.json === true,
    watch: values.watch === true,
    force: values.force === true,
    yes: values.yes === true,
    port,
    host: values.host,
    actions: values.actions === true,
    help: values.help === true,
    version: values.version === true,
    colour: values['no-color'] !== true && (env.NO_COLOR ?? '') === '',
  };
}
