import { defineZkrxVitest } from '../../../vitest.shared.ts';

const config = defineZkrxVitest(import.meta.dirname);

// Vitest hands `ssr.resolve.conditions` to the test workers' Node as `--conditions`. The shared
// list has `import` and `module`: Node's require() then picks a dual package's ESM entry and
// returns its namespace, so Express 5's router gets `{ default }` for `require('is-promise')`
// and every route handler fails with "isPromise is not a function". Keep only what the
// workspace's sources need.
if (config.ssr?.resolve) {
  config.ssr.resolve.conditions = ['@zkrx/source', 'node', 'development|production'];
}

export default config;
