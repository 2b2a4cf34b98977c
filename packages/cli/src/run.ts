/**
 * `zkrx`: parses the command line, connects, runs the command, and turns every failure into a
 * message a person understands and an exit code (0 done, 1 failed, 2 wrong usage).
 */
import { readFileSync } from 'node:fs';
import { isZkError, validatePath, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { openClient } from './connect';
import { CONSOLE_PORT, consoleCommand } from './console-command';
import { DEV_SERVER_PORT, devServer } from './dev-server';
import { CliError, CliErrorCode } from './errors';
import { listFleet } from './fleet';
import { fleetView } from './fleet-view';
import { colours, noColours } from './format';
import { helpText } from './help';
import { type CliIo, processIo } from './io';
import { list } from './list';
import { liveView } from './live-view';
import { COMMANDS, type CommandName, type ParsedCommandLine, parseCommandLine } from './options';
import { release, revoke } from './release';

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String(manifest.version);
}

function required(parsed: ParsedCommandLine, what: string, example: string): string {
  if (parsed.target === undefined) {
    throw new CliError(
      CliErrorCode.BadUsage,
      `zkrx ${parsed.command} needs ${what}: zkrx ${parsed.command} ${example} (zkrx ${parsed.command} --help)`,
    );
  }
  try {
    return validatePath(parsed.target);
  } catch (error) {
    throw new CliError(
      CliErrorCode.BadUsage,
      `zkrx ${parsed.command}: "${parsed.target}" is not a ZooKeeper path (${(error as Error).message})`,
      { cause: error },
    );
  }
}

async function withClient(
  parsed: ParsedCommandLine,
  work: (client: ZkClient) => Promise<number>,
): Promise<number> {
  const client = await openClient(parsed.connect, parsed.timeoutMs);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

async function execute(parsed: ParsedCommandLine, io: CliIo): Promise<number> {
  const command = parsed.command as Exclude<CommandName, 'help'>;
  const paint = parsed.colour && io.stdout.isTTY === true ? colours : noColours;
  switch (command) {
    case 'locks':
    case 'leaders':
    case 'members':
    case 'partitions': {
      const fleet = command === 'members' || command === 'partitions';
      const path = required(parsed, 'a path', fleet ? '/fleet/workers' : '/locks');
      if (parsed.watch && !parsed.json && io.stdout.isTTY !== true) {
        throw new CliError(
          CliErrorCode.BadUsage,
          `zkrx ${command} --watch draws on a terminal, and this output is not one: add --json for one JSON line per change`,
        );
      }
      const options = { connect: parsed.connect, json: parsed.json, paint, io };
      if (fleet) {
        const fleetOptions = { ...options, command };
        return withClient(parsed, (client) =>
          parsed.watch
            ? fleetView(client, path, fleetOptions)
            : listFleet(client, path, fleetOptions),
        );
      }
      const lockOptions = { ...options, command };
      return withClient(parsed, (client) =>
        parsed.watch ? liveView(client, path, lockOptions) : list(client, path, lockOptions),
      );
    }
    case 'release': {
      const node = required(parsed, 'a lock node', '<lock path>/<node name> --force');
      if (!parsed.force) {
        throw new CliError(
          CliErrorCode.BadUsage,
          `zkrx release deletes a lock node another process holds or waits with: add --force to mean it (zkrx release --help)`,
        );
      }
      return withClient(parsed, (client) => release(client, node, { yes: parsed.yes, io }));
    }
    case 'revoke': {
      const node = required(parsed, 'a lock node', '<lock path>/<node name>');
      return withClient(parsed, (client) => revoke(client, node, io));
    }
    case 'console': {
      const home = parsed.target === undefined ? '/' : required(parsed, 'a path', '/locks');
      const options = {
        connect: parsed.connect,
        home,
        host: parsed.host ?? '127.0.0.1',
        port: parsed.port ?? CONSOLE_PORT,
        actions: parsed.actions,
        io,
      };
      return withClient(parsed, (client) => consoleCommand(client, options));
    }
    case 'dev-server': {
      if (parsed.target !== undefined) {
        throw new CliError(
          CliErrorCode.BadUsage,
          `zkrx dev-server takes no argument, got "${parsed.target}" (zkrx dev-server --help)`,
        );
      }
      return devServer({ port: parsed.port ?? DEV_SERVER_PORT, io });
    }
  }
}

/** The message and exit code of a failure. */
function failure(error: unknown): { message: string; exitCode: number } {
  if (CliError.isInstance(error)) return { message: error.message, exitCode: error.exitCode };
  if (isZkError(error)) {
    const usage = error.code === ZkErrorCode.InvalidPath || error.code === ZkErrorCode.BadArguments;
    const hint =
      error.code === ZkErrorCode.NoAuth
        ? ' (the ACL of a node refuses this client: zkrx connects without credentials)'
        : error.code === ZkErrorCode.ConnectionLoss || error.code === ZkErrorCode.SessionExpired
          ? ' (the connection to ZooKeeper was lost: try again)'
          : '';
    return { message: `${error.message}${hint}`, exitCode: usage ? 2 : 1 };
  }
  return {
    message: `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    exitCode: 1,
  };
}

/**
 * Runs the `zkrx` command line `argv` (without `node` and the script name): what `npx zkrx`
 * does, callable from a program.
 *
 * ## Example
 * ```ts
 * const exitCode = await run(['locks', '/locks', '--json', '--connect', 'zk1:2181']);
 * // Output: {"path": "/locks", "locks": [...]} on stdout; exitCode 0
 * ```
 *
 * @param argv The arguments, e.g. `['locks', '/locks', '--watch']`.
 * @param io Where to read and write (the process's streams by default).
 * @return The exit code: 0 done, 1 failed, 2 wrong usage.
 */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, io.env);
    if (parsed.version) {
      io.stdout.write(`${version()}\n`);
      return 0;
    }
    if (parsed.command === 'help') {
      const topic = parsed.target;
      if (topic !== undefined && !(COMMANDS as readonly string[]).includes(topic)) {
        throw new CliError(
          CliErrorCode.BadUsage,
          `zkrx has no command "${topic}": use ${COMMANDS.join(', ')}`,
        );
      }
      io.stdout.write(helpText(topic as CommandName | undefined));
      return 0;
    }
    if (parsed.help) {
      io.stdout.write(helpText(parsed.command));
      return 0;
    }
    if (parsed.command === undefined) {
      io.stderr.write(helpText());
      return 2;
    }
    return await execute(parsed, io);
  } catch (error) {
    const { message, exitCode } = failure(error);
    io.stderr.write(`zkrx: ${message}\n`);
    return exitCode;
  }
}
