import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: [
    'src/index.ts',
    'src/vitest-global-setup.ts',
    'src/jest-global-setup.ts',
    'src/jest-global-teardown.ts',
  ],
  // `testZooKeeper()` imports the user's vitest lazily (when there is one): not a dependency
  // (not even an optional peer: npm 11 then fails fresh installs beside some vitest toolchains,
  // ERESOLVE), so tsup would bundle it unless told.
  external: ['vitest'],
  // Classes keep their names in both builds (Nest's logs and tokens name them): without it the
  // CommonJS build made from the ESM one renames a class with static members `_class2`.
  keepNames: true,
});
