/**
 * The ZooKeeper a test run shares: read from vitest's `inject('zookeeper')` (provided by the
 * global setup) or from `ZKRX_TEST_CONNECT`. Loads vitest lazily, so the main entry never needs it.
 */

/** The shared test server, as provided by `@zkrx/testing/vitest-global-setup`. */
export interface TestZooKeeper {
  /** `host:port` of the server (or a comma-separated list). */
  connectString: string;
}

/** The environment variable that names a ZooKeeper to use instead of starting one. */
export const TEST_CONNECT_ENV = 'ZKRX_TEST_CONNECT';

/**
 * Returns the ZooKeeper the current test run shares.
 *
 * Inside vitest, it is what the global setup provided (`inject('zookeeper')`); elsewhere, or when
 * nothing was provided, `process.env.ZKRX_TEST_CONNECT`. Rejects with a hint when there is neither.
 *
 * ## Example
 *
 * ```ts
 * const { connectString } = await testZooKeeper();
 * console.log(connectString);
 * // Output: 127.0.0.1:38021
 * ```
 *
 * @return The shared server's connect string.
 */
export async function testZooKeeper(): Promise<TestZooKeeper> {
  const provided = await injectedZooKeeper();
  if (provided) return provided;
  const fromEnv = process.env[TEST_CONNECT_ENV];
  if (fromEnv) return { connectString: fromEnv };
  throw new Error(
    'No test ZooKeeper: add "@zkrx/testing/vitest-global-setup" to vitest\'s test.globalSetup, ' +
      `or set ${TEST_CONNECT_ENV}=host:port`,
  );
}

async function injectedZooKeeper(): Promise<TestZooKeeper | undefined> {
  let inject: ((key: string) => unknown) | undefined;
  try {
    inject = (await import('vitest')).inject as (key: string) => unknown;
  } catch {
    return undefined; // vitest not installed
  }
  let value: unknown;
  try {
    value = inject('zookeeper');
  } catch {
    return undefined; // vitest installed but not running this code
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { connectString?: unknown }).connectString === 'string'
  ) {
    return { connectString: (value as TestZooKeeper).connectString };
  }
  return undefined;
}
