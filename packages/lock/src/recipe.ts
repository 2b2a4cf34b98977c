/**
 * @zkrx/lock/recipe — EXPERIMENTAL: the kit @zkrx/rwlock and @zkrx/leader are built with, for
 * writing a lock recipe of your own on the same queue engine (node names shared with Curator
 * and kazoo, the queue, the lease). It may change in any minor release; the recipes' own APIs
 * (@zkrx/lock, @zkrx/rwlock, @zkrx/leader) are the stable surface.
 */

export { validateGuardOps } from './guard';
export type { LeaseCore } from './lease';
export type { Decide, JoinOptions, QueueDecision, QueueHold } from './lock-queue';
export { joinQueue, removeOwnNode } from './lock-queue';
export type {
  JoinContext,
  LockRecipe,
  LockRecipeSpec,
  ResolvedLockOptions,
} from './lock-recipe';
export {
  defaultLockData,
  defineLockRecipe,
  observeLease,
  resolveLockOptions,
} from './lock-recipe';
export { exclusiveRule } from './mutex';
export type { ChildKind, LockChild } from './node-names';
export {
  Marker,
  PROTECTED_PREFIX,
  parseChild,
  protectedName,
  recipeOfKind,
  sequenceOf,
  sortChildren,
} from './node-names';
export type { LockLabels } from './telemetry';
export { lockAttributes, meteredBy } from './telemetry';
