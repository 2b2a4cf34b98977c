/**
 * Shared vitest configuration of every zkrx package: a `unit` project (pure logic, no server)
 * and an `integration` project (real ZooKeeper from @zkrx/testing's global setup, serial).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const globalSetup = fileURLToPath(
  new URL('./packages/testing/src/vitest-global-setup.ts', import.meta.url),
);
/** Patient `vi.waitUntil` defaults for every test file (see the file). */
const setupFiles = [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))];

/**
 * Resolve `@zkrx/*` to their `src/` so tests never need a build. Vitest also hands these to
 * Node as `--conditions` for external packages, so nothing that would make Node's `require()`
 * load a package's ESM build (`import`, `module`) belongs here.
 */
const conditions = ['@zkrx/source', 'node', 'development|production'];

export interface ZkrxVitestOptions {
  /** Extra time for slow integration suites (ensembles, Java interop). */
  integrationTimeoutMs?: number;
}

export function defineZkrxVitest(root: string, options: ZkrxVitestOptions = {}) {
  const timeout = options.integrationTimeoutMs ?? 60_000;
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@zkrx/source'] } },
    test: {
      root,
      setupFiles,
      // expect.poll's default cap (1 s) fails a merely late condition on two busy cores.
      expect: { poll: { timeout: 15_000 } },
      reporters: process.env.CI ? ['default'] : ['default'],
      projects: [
        {
          extends: true,
          test: {
            name: 'unit',
            include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
            exclude: ['**/*.integration.test.ts', '**/node_modules/**'],
            // CPU-bound tests (the decoder fuzz) take several times longer on two busy cores;
            // the cap only decides how fast a hung test fails (vitest's default is 5 s).
            testTimeout: 30_000,
          },
        },
        {
          extends: true,
          test: {
            name: 'integration',
            include: ['src/**/*.integration.test.ts', 'test/**/*.integration.test.ts'],
            globalSetup: [globalSetup],
            fileParallelism: false,
            testTimeout: timeout,
            hookTimeout: timeout,
          },
        },
      ],
    },
  });
}
