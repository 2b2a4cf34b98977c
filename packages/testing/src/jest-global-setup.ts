/**
 * Jest global setup: one real ZooKeeper for the whole run, named to the tests (and to the
 * processes they spawn) by `ZKRX_TEST_CONNECT`; `@zkrx/testing/jest-global-teardown` stops it.
 */
import { startZooKeeper, type ZooKeeperServer } from './server';
import { TEST_CONNECT_ENV } from './test-zookeeper';

/** Where the setup keeps the server for the teardown (Jest runs both in one process). */
export const JEST_SERVER = Symbol.for('@zkrx/testing.jest-server');

/**
 * Starts one ZooKeeper for the Jest run (unless `ZKRX_TEST_CONNECT` names one already) and sets
 * `ZKRX_TEST_CONNECT` to it: Jest's workers start after the global setup and inherit it, so a
 * test reads it from `process.env` (or `await testZooKeeper()`).
 *
 * ## Example
 * ```json
 * // package.json (or jest.config / test/jest-e2e.json)
 * "jest": {
 *   "globalSetup": "@zkrx/testing/jest-global-setup",
 *   "globalTeardown": "@zkrx/testing/jest-global-teardown"
 * }
 * // a test
 * ZkModule.forRoot({ connect: process.env.ZKRX_TEST_CONNECT!, isGlobal: true })
 * ```
 */
export default async function globalSetup(): Promise<void> {
  if (process.env[TEST_CONNECT_ENV]) return;
  const server = await startZooKeeper();
  process.env[TEST_CONNECT_ENV] = server.connectString;
  (globalThis as Record<symbol, ZooKeeperServer | undefined>)[JEST_SERVER] = server;
}
