/**
 * The two layouts an election stands in, as lock recipes: the latch (Curator LeaderLatch), which
 * a candidate holds until it leaves, and the selector (Curator LeaderSelector), held per term.
 */
import { exclusiveRule, LockRecipe, Marker, queueJoin } from '@zkrx/lock/recipe';

/** An election's layout: its queue's recipe, and its kind in telemetry (`zkrx.lock.kind`). */
export interface ElectionLayout {
  /** `leader-latch` or `leader-selector`: the recipe's name, and the telemetry kind. */
  readonly kind: string;
  /**
   * Where the candidate's terms come from: a lease observable (the recipe's `lease`) that emits
   * the lease once the candidate leads, errors LockLostError when the term is lost (the
   * candidate then stands again) and calls `onQueued` once its node is in the queue.
   */
  readonly recipe: Pick<LockRecipe, 'lease'>;
}

/** One candidate leads at a time: the first node of the queue, as in a mutex. */
function layout(kind: string, marker: string): ElectionLayout {
  // Candidates watch their own node from its creation: a failover then costs one notification
  // (the next in line leads without a listing), and a term ends at once when its node goes.
  return {
    kind,
    recipe: new LockRecipe({
      name: kind,
      join: queueJoin({ marker, decide: exclusiveRule, watchOwnNode: true }),
    }),
  };
}

/** Curator LeaderLatch layout: `_c_<uuid>-latch-<seq>`. */
export const latch = layout('leader-latch', Marker.latch);

/** Curator LeaderSelector layout: a mutex on the path (`_c_<uuid>-lock-<seq>`). */
export const selector = layout('leader-selector', Marker.lock);
