import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

// `index` is the programmatic entry; `bin` is the `zkrx` command (`bin` in package.json points
// at its ESM build; the `#!/usr/bin/env node` line is kept).
export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/bin.ts'],
  // Classes keep their names in both builds (Nest's logs and tokens name them): without it the
  // CommonJS build made from the ESM one renames a class with static members `_class2`.
  keepNames: true,
});
