import { defineZkrxVitest } from '../../vitest.shared.ts';

const config = defineZkrxVitest(import.meta.dirname, { integrationTimeoutMs: 120_000 });

// Vitest hands ssr.resolve.conditions to the test workers as Node's --conditions: with 'import'
// among them, Node's own require() takes packages' ESM entries, and Express 5's router gets
// is-promise's module namespace instead of its function (every request fails). Vite adds
// 'import' / 'require' per import by itself, so it is not needed here.
const resolve = config.ssr?.resolve;
if (resolve?.conditions) {
  resolve.conditions = resolve.conditions.filter((condition) => condition !== 'import');
}

export default config;
