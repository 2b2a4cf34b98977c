import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  // `@zkrx/lock/recipe` is its own folder (src/recipe), built as dist/recipe.*.
  entry: { index: 'src/index.ts', recipe: 'src/recipe/index.ts', adapter: 'src/adapter.ts' },
  // Both entries share one copy of the engine (its classes, its async-context store), in the
  // CommonJS build too.
  splitting: true,
});
