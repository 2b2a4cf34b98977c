/**
 * @zkrx/lock/recipe — EXPERIMENTAL: what a recipe (a kind of lock) is made of — the engine
 * @zkrx/lock, @zkrx/rwlock and @zkrx/leader are built on — for writing one of your own on it:
 * node names shared with Curator and kazoo, the queue, the lease, the session view, the errors
 * and the telemetry. It may change in any minor release; the recipes' own APIs (@zkrx/lock,
 * @zkrx/rwlock, @zkrx/leader) are the stable surface.
 */

export { removeOwnNode } from './clean-up';
export { validateGuardOps } from './guarded-write';
export type { Hold } from './hold';
export { LeaseRuns } from './lease-runs';
export type { ChildKind, LockChild } from './lock-children';
export {
  Marker,
  PROTECTED_PREFIX,
  parseChild,
  protectedName,
  recipeOfKind,
  sequenceOf,
  sortChildren,
} from './lock-children';
export type { ResolvedLockOptions } from './lock-options';
export {
  defaultLockData,
  resolveLockOptions,
  validateLockPath,
  validateTimeout,
} from './lock-options';
export type { Join, JoinContext, LockRecipeSpec, QueueSpec } from './lock-recipe';
export { LockRecipe, observeLease, queueJoin } from './lock-recipe';
export { mutexRecipe } from './mutex-recipe';
export type { HeldNode, JoinOptions } from './queue';
export { joinQueue } from './queue';
export type { Decide, QueueDecision } from './queue-rules';
export { exclusiveRule } from './queue-rules';
export type {
  Session,
  SessionEnd,
  SessionOptions,
  SessionStatus,
  SuspensionPolicy,
} from './session';
export { sessionOf } from './session';
export type { LockLabels } from './telemetry';
export { lockAttributes, meteredBy } from './telemetry';
export { unlessGone } from './unless-gone';
