/**
 * @zkrx/lock — herd-free, fenced ZooKeeper locks as RxJS observables: mutex, semaphore and
 * multi-lock, sharing paths with Curator and kazoo. (The kit the other recipes are built with
 * is the experimental subpath `@zkrx/lock/recipe`.)
 */

export type { LockLostReason } from './errors';
export {
  LeaseReleasedError,
  LockBusyError,
  LockConflictError,
  LockLostError,
  LockRevokedError,
  LockTimeoutError,
} from './errors';
export type { InspectedLock, InspectedParticipant, InspectReads } from './inspect';
export { inspect, inspectTree } from './inspect';
export type {
  InspectedKind,
  InspectedLayout,
  NodeLayout,
  ParticipantMode,
} from './inspect-rules';
export type { Lease } from './kit/lease';
export type { LeaseState, SuspendedPolicy } from './kit/lease-core';
export type { LockOptions } from './kit/lock-recipe';
export { validateLockPath, validateTimeout } from './kit/lock-recipe';
export type { MultiLease } from './multi-lock';
export { acquireAll, multiLock } from './multi-lock';
export type { MergeMapLockedOptions } from './mutex';
export {
  acquire,
  heldLease,
  mergeMapLocked,
  mutex,
  runLocked,
  tryAcquire,
  withLock,
} from './mutex';
export { nodeName } from './node-name';
export type { RetryLater, RetryLaterReason } from './retry-later';
export { acquireWhileConnected, isZooKeeperUnavailable, retryLaterOf } from './retry-later';
export { requestRevoke } from './revoke';
export type { SemaphoreOptions } from './semaphore';
export { acquireSemaphore, semaphore, semaphoreMutex } from './semaphore';
