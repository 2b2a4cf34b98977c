/**
 * Vitest global setup: one real ZooKeeper for the whole test run, provided to tests as
 * `inject('zookeeper')` (or reused from `ZKRX_TEST_CONNECT`), stopped at the end.
 */
import { startZooKeeper } from './server';
import { TEST_CONNECT_ENV, type TestZooKeeper } from './test-zookeeper';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The ZooKeeper of the test run, from `@zkrx/testing/vitest-global-setup`. */
    zookeeper: TestZooKeeper;
  }
}

/**
 * What the setup uses of vitest's `TestProject` (from `vitest/node`, which is ES modules only: a
 * type import of it would break this entry's CommonJS declarations for TypeScript before 5.8).
 */
export interface VitestProject {
  provide(key: 'zookeeper', value: TestZooKeeper): void;
}

/**
 * Starts one ZooKeeper for the test run (unless `ZKRX_TEST_CONNECT` names one) and provides it.
 *
 * Also sets `ZKRX_TEST_CONNECT` for the run, so processes spawned by tests find the server too.
 *
 * ## Example
 *
 * ```ts
 * // vitest.config.ts
 * export default defineConfig({ test: { globalSetup: ['@zkrx/testing/vitest-global-setup'] } });
 * // a test
 * const { connectString } = inject('zookeeper');
 * ```
 *
 * @param project Vitest's test project (its `provide` is used).
 * @return The teardown, which stops the server it started.
 */
export default async function setup(
  project: VitestProject,
): Promise<(() => Promise<void>) | undefined> {
  const reused = process.env[TEST_CONNECT_ENV];
  if (reused) {
    project.provide('zookeeper', { connectString: reused });
    return undefined;
  }
  const server = await startZooKeeper();
  project.provide('zookeeper', { connectString: server.connectString });
  process.env[TEST_CONNECT_ENV] = server.connectString;
  return async () => {
    if (process.env[TEST_CONNECT_ENV] === server.connectString)
      delete process.env[TEST_CONNECT_ENV];
    await server.close();
  };
}
