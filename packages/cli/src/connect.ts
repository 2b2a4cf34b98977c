/**
 * The client a `zkrx` command works with: connected within the timeout, or an error that says
 * where it tried and how to point it elsewhere.
 */
import { createClient, isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { CliError, CliErrorCode } from './errors';

/** A client connected to `connect`; rejects with CliError `BadUsage` or `Unreachable`. */
export async function openClient(connect: string, timeoutMs: number): Promise<ZkClient> {
  let client: ZkClient;
  try {
    client = createClient({ connect, connectTimeoutMs: timeoutMs });
  } catch (error) {
    if (isZkError(error, ZkErrorCode.BadArguments)) {
      throw new CliError(
        CliErrorCode.BadUsage,
        `--connect "${connect}" is not a connect string (host:port[,host:port...][/chroot]): ${(error as Error).message}`,
      );
    }
    throw error;
  }
  try {
    await client.connected(timeoutMs);
    return client;
  } catch (error) {
    await client.close().catch(() => {});
    if (isZkError(error, ZkErrorCode.ConnectTimeout)) {
      throw new CliError(
        CliErrorCode.Unreachable,
        `cannot reach ZooKeeper at ${connect} within ${timeoutMs} ms: is it running there? (--connect host:port or ZK_CONNECT; --timeout ms)`,
        { cause: error },
      );
    }
    throw error;
  }
}
