import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

export default defineZkrxPackageBuild({
  entry: [
    'src/index.ts',
    'src/vitest-global-setup.ts',
    'src/jest-global-setup.ts',
    'src/jest-global-teardown.ts',
  ],
  // `testZooKeeper()` imports the user's vitest lazily (when there is one): not a dependency
  // (not even an optional peer: npm 11 then fails fresh installs beside some vitest toolchains,
  // ERESOLVE), so the bundler would bundle it unless told.
  deps: { neverBundle: ['vitest', /^vitest\//] },
});
