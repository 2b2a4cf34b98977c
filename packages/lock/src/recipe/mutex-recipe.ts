/**
 * The exclusive lock as a recipe (Curator InterProcessMutex layout): what `mutex`, `acquire`,
 * `tryAcquire` and `withLock` are, and the `mutex` of a path beside its read and write locks.
 */

import { Marker } from './lock-children';
import { LockRecipe, queueJoin } from './lock-recipe';
import { exclusiveRule } from './queue-rules';

/** The exclusive lock: `_c_<uuid>-lock-<seq>` nodes, the first one holds. */
export const mutexRecipe = new LockRecipe({
  name: 'mutex',
  join: queueJoin({ marker: Marker.lock, decide: exclusiveRule }),
});
