import { defineZkrxVitest } from '../../vitest.shared.ts';

const config = defineZkrxVitest(import.meta.dirname);

// Vitest hands `ssr.resolve.conditions` to the test workers' Node as `--conditions`. With the
// shared list's `import` and `module` there, Node's require() picks a dual package's ESM entry:
// Express 5's router gets `{ default }` for `require('is-promise')` and every route fails with
// "isPromise is not a function". Keep only what the workspace's sources need.
if (config.ssr?.resolve) {
  config.ssr.resolve.conditions = ['@zkrx/source', 'node', 'development|production'];
}

export default config;
