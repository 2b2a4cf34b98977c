import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  // `@zkrx/lock/recipe` is the kit's own folder (src/kit), built as dist/recipe.*.
  entry: { index: 'src/index.ts', recipe: 'src/kit/index.ts' },
  // Both entries share one copy of the engine (its classes, its async-context store), in the
  // CommonJS build too.
  splitting: true,
});
