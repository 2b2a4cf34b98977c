import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

// `@zkrx/lock/recipe` is its own folder (src/recipe), built as dist/recipe.*. The entries share
// one copy of the engine (its classes, its async-context store), in the CommonJS build too.
export default defineZkrxPackageBuild({
  entry: { index: 'src/index.ts', recipe: 'src/recipe/index.ts', adapter: 'src/adapter.ts' },
});
