import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

// `@zkrx/lock/recipe` is the kit's own folder (src/kit), built as dist/recipe.*. Both entries
// share one copy of the engine (its classes, its async-context store), in the CommonJS build too.
export default defineZkrxPackageBuild({
  entry: { index: 'src/index.ts', recipe: 'src/kit/index.ts' },
});
