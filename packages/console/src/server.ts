/**
 * `startConsole`: the console on its own HTTP server — on 127.0.0.1 unless told otherwise —
 * what `zkrx console` runs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConsoleError, ConsoleErrorCode } from './errors';
import { type ConsoleOptions, consoleHandler } from './handler';

export interface StartConsoleOptions extends ConsoleOptions {
  /** The address to listen on (default `127.0.0.1`: this machine only). */
  readonly host?: string;
  /** The port (default 0: any free port; `url` says which). */
  readonly port?: number;
}

/** A running console. */
export interface RunningConsole {
  /** Where to open it, e.g. `http://127.0.0.1:7181/`. */
  readonly url: string;
  readonly port: number;
  /** Stops serving and lets go of every watch (the client stays open: it is the caller's). */
  close(): Promise<void>;
}

/**
 * Starts the console on its own HTTP server.
 *
 * ## Example
 * ```ts
 * const running = await startConsole({ client, port: 7181 });
 * console.log(running.url);
 * // Output: http://127.0.0.1:7181/
 * ```
 *
 * @param options The client, where to listen, and whether actions are on.
 * @return The running console. Rejects with ConsoleError `BadOptions` for a bad option, and
 *   with the listen error (`EADDRINUSE`...).
 */
export async function startConsole(options: StartConsoleOptions): Promise<RunningConsole> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConsoleError(
      ConsoleErrorCode.BadOptions,
      `port must be 0 to 65535, got ${String(port)}`,
    );
  }
  const handler = consoleHandler(options);
  const server = createServer(handler);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    handler.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        handler.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
