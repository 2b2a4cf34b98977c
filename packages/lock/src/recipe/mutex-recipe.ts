/**
 * The exclusive lock as a recipe (Curator InterProcessMutex layout): what `mutex`, `acquire`,
 * `tryAcquire` and `withLock` are, and the `mutex` of a path beside its read and write locks.
 */
import { defineLockRecipe } from './lock-recipe';
import { Marker } from './node-names';
import { exclusiveRule } from './queue-rules';

/** The exclusive lock: `_c_<uuid>-lock-<seq>` nodes, the first one holds. */
export const mutexRecipe = defineLockRecipe({
  name: 'mutex',
  marker: Marker.lock,
  decide: exclusiveRule,
});
