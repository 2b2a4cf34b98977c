/**
 * `zkrx dev-server`: a ZooKeeper for development in one command, where Java is installed — the
 * embedded server @zkrx/testing starts, in a temporary directory, until Ctrl-C.
 */
import { startZooKeeper, ZooKeeperNotFoundError, ZooKeeperStartError } from '@zkrx/testing';
import { CliError, CliErrorCode } from './errors';
import { type CliIo, untilInterrupted } from './io';

/** ZooKeeper's default port: where apps and `zkrx` commands look when not told. */
export const DEV_SERVER_PORT = 2181;

const withoutJava =
  'Without Java: docker run --rm -p 2181:2181 zookeeper:3.9 (or podman, the same line)';

/**
 * Starts ZooKeeper 3.x for development on 127.0.0.1:`port` (ticks of 2 s, so sessions of 4 to
 * 40 s), says where, and runs until interrupted; then stops it and removes its data.
 *
 * @return The exit code: 0 once stopped.
 */
export async function devServer(options: { port: number; io: CliIo }): Promise<number> {
  const { io, port } = options;
  let server: Awaited<ReturnType<typeof startZooKeeper>>;
  try {
    server = await startZooKeeper({ port, tickTime: 2_000 });
  } catch (error) {
    if (ZooKeeperNotFoundError.isInstance(error)) {
      throw new CliError(CliErrorCode.NotStarted, `${error.message}\n${withoutJava}`, {
        cause: error,
      });
    }
    if (ZooKeeperStartError.isInstance(error) && error.bindFailed) {
      throw new CliError(
        CliErrorCode.NotStarted,
        `port ${port} is taken (a ZooKeeper runs there already?): zkrx dev-server --port <another>`,
        { cause: error },
      );
    }
    throw error;
  }
  // Listening before it says "Ctrl-C stops it.": a Ctrl-C that follows the line at once (a
  // script's) would otherwise find no listener and kill the process, leaving the server's data.
  const interrupted = untilInterrupted(io);
  io.stdout.write(
    `ZooKeeper for development on ${server.connectString} (data in ${server.dir}, removed when it stops)\n` +
      `  ZK_CONNECT=${server.connectString}\n` +
      'Ctrl-C stops it.\n',
  );
  // The server's process is unreferenced (a test's servers must not keep its runner alive) and a
  // signal listener keeps nothing alive either: without this timer the command would exit here,
  // taking the server with it.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await interrupted;
  clearInterval(keepAlive);
  await server.close();
  io.stdout.write('stopped\n');
  return 0;
}
