/**
 * @zkrx/lock — herd-free, fenced ZooKeeper locks as RxJS observables: mutex, semaphore and
 * multi-lock, sharing paths with Curator and kazoo.
 */

export type { LockLostReason } from './errors';
export { LockConflictError, LockLostError, LockTimeoutError } from './errors';
export type { Lease, LeaseState, SuspendedPolicy } from './lease';
export { heldInContext, LeaseCore, LeaseReleasedError, runHolding } from './lease';
export type { Decide, JoinOptions, QueueDecision, QueueHold } from './lock-queue';
export { deleteQuietly, joinQueue, removeOrphan, removeOwnNode } from './lock-queue';
export type { MultiLease } from './multi-lock';
export { acquireAll, multiLock } from './multi-lock';
export type { MergeMapLockedOptions } from './mutex';
export {
  acquire,
  exclusiveRule,
  heldLease,
  mergeMapLocked,
  mutex,
  runLocked,
  tryAcquire,
  withLock,
} from './mutex';
export type { ChildKind, LockChild } from './node-names';
export {
  Marker,
  PROTECTED_PREFIX,
  parseChild,
  protectedName,
  sequenceOf,
  sortChildren,
} from './node-names';
export type {
  JoinContext,
  LockOptions,
  LockRecipe,
  LockRecipeSpec,
  ResolvedLockOptions,
} from './recipe';
export {
  defaultLockData,
  defineLockRecipe,
  observeLease,
  resolveLockOptions,
  validateLockPath,
  validateTimeout,
} from './recipe';
export type { SemaphoreOptions } from './semaphore';
export { acquireSemaphore, semaphore, semaphoreMutex } from './semaphore';
