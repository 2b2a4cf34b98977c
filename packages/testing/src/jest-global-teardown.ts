/**
 * Jest global teardown: stops the ZooKeeper `@zkrx/testing/jest-global-setup` started.
 */
import { JEST_SERVER } from './jest-global-setup';
import type { ZooKeeperServer } from './server';
import { TEST_CONNECT_ENV } from './test-zookeeper';

/**
 * Closes the server the global setup started (nothing when it reused `ZKRX_TEST_CONNECT`).
 *
 * ## Example
 * ```json
 * "jest": { "globalTeardown": "@zkrx/testing/jest-global-teardown" }
 * ```
 */
export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as Record<symbol, ZooKeeperServer | undefined>;
  const server = holder[JEST_SERVER];
  if (!server) return;
  holder[JEST_SERVER] = undefined;
  if (process.env[TEST_CONNECT_ENV] === server.connectString) delete process.env[TEST_CONNECT_ENV];
  await server.close();
}
