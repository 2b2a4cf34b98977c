/**
 * `zkrx console [<path>]`: the web console (@zkrx/console) on this machine's 127.0.0.1 unless
 * told otherwise, read-only unless started with `--actions` — then signing in takes a token
 * (ZKRX_CONSOLE_TOKEN, or one made for the run and printed here) — until Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import { ConsoleError, startConsole } from '@zkrx/console';
import type { ZkClient } from '@zkrx/core';
import { CliError, CliErrorCode } from './errors';
import { type CliIo, untilInterrupted } from './io';

/** Where `zkrx console` listens when `--port` does not say. */
export const CONSOLE_PORT = 7181;

export interface ConsoleCommandOptions {
  readonly connect: string;
  readonly home: string;
  readonly host: string;
  readonly port: number;
  readonly actions: boolean;
  readonly io: CliIo;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Runs the console until interrupted; resolves the exit code. */
export async function consoleCommand(
  client: ZkClient,
  options: ConsoleCommandOptions,
): Promise<number> {
  const { io, actions } = options;
  const given = io.env.ZKRX_CONSOLE_TOKEN;
  const token = actions ? given || randomBytes(18).toString('base64url') : undefined;
  let running: Awaited<ReturnType<typeof startConsole>>;
  try {
    running = await startConsole({
      client,
      host: options.host,
      port: options.port,
      home: options.home,
      actions,
      token,
      label: options.connect.replace(/^[^@]*@/, ''),
    });
  } catch (error) {
    if (ConsoleError.isInstance(error)) {
      throw new CliError(CliErrorCode.BadUsage, `zkrx console: ${error.message}`, { cause: error });
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(
        CliErrorCode.NotStarted,
        `port ${options.port} is taken: zkrx console --port <another> (0: any free port)`,
        { cause: error },
      );
    }
    throw error;
  }
  const lines = [`zkrx console on ${running.url} (ZooKeeper ${options.connect})`];
  lines.push(
    actions
      ? `  actions on: release --force and revoke, audited on stderr; sign in with the token ${given ? 'in ZKRX_CONSOLE_TOKEN' : token}`
      : '  read-only (zkrx console --actions offers release --force and revoke, behind a token)',
  );
  if (!LOOPBACK.test(options.host)) {
    lines.push(
      `  listening on ${options.host}: anyone who can reach this machine can read the page`,
    );
  }
  lines.push('Ctrl-C stops it.');
  // Listening before the line says so (see dev-server.ts).
  const interrupted = untilInterrupted(io);
  io.stdout.write(`${lines.join('\n')}\n`);
  await interrupted;
  await running.close();
  io.stdout.write('stopped\n');
  return 0;
}
