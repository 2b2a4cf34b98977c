import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/recipe.ts'],
  // Both entries share one copy of the engine (its classes, its async-context store), in the
  // CommonJS build too.
  splitting: true,
});
