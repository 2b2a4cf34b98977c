import { defineZkrxPackageBuild } from '../../../tsdown.shared.ts';

export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/terminus.ts', 'src/fleet.ts', 'src/testing.ts'],
  // Every constructor parameter names its token (@Inject): the build needs no decorator
  // metadata (tsconfig.build.json turns it off; the decorators are TypeScript's legacy ones).
  tsconfig: 'tsconfig.build.json',
  // One copy of each class across the entries in both formats: LeaderService is an injection
  // token, and /testing provides the main entry's.
  outputOptions: (options, format) =>
    // The optional peers (optional-peers.ts) are loaded with import(): in the CommonJS build,
    // require() them instead, so that a CommonJS application and this package share one copy.
    format === 'cjs' ? { ...options, dynamicImportInCjs: false } : options,
});
