import { defineZkrxPackageBuild } from '../../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/fleet.ts'],
  // Classes keep their names in both builds (Nest's logs and tokens name them): without it the
  // CommonJS build made from the ESM one renames a class with static members `_class2`.
  keepNames: true,
});
