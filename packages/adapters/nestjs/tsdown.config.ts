import { defineZkrxPackageBuild } from '../../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/terminus.ts', 'src/fleet.ts', 'src/testing.ts'],
  // Every constructor parameter names its token (@Inject): the build needs no decorator
  // metadata, so esbuild compiles it (no swc).
  tsconfig: 'tsconfig.build.json',
  // One copy of each class across the entries in the CommonJS build too (ES modules split by
  // default): LeaderService is an injection token, and /testing provides the main entry's.
  splitting: true,
  // Classes keep their names in both builds (Nest's logs and tokens name them): without it the
  // CommonJS build made from the ESM one renames a class with static members `_class2`.
  keepNames: true,
  esbuildOptions(options, { format }) {
    // The optional peers (optional-peers.ts) are loaded with import(): in the CommonJS build,
    // require() them instead, so that a CommonJS application and this package share one copy.
    if (format === 'cjs') options.supported = { ...options.supported, 'dynamic-import': false };
  },
});
