/**
 * @zkrx/lock — herd-free, fenced ZooKeeper locks as RxJS observables: mutex, semaphore and
 * multi-lock, sharing paths with Curator and kazoo. (What recipes are made of — the engine
 * @zkrx/rwlock and @zkrx/leader are built on — is the experimental subpath `@zkrx/lock/recipe`;
 * what the adapters share, `@zkrx/lock/adapter`.)
 */

export type { InspectedLock, InspectedParticipant, InspectReads } from './inspect';
export { inspect, inspectTree } from './inspect';
export type {
  InspectedKind,
  InspectedLayout,
  NodeLayout,
  ParticipantMode,
} from './inspect-rules';
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
export type { LockLostReason } from './recipe/errors';
export {
  LeaseReleasedError,
  LockBusyError,
  LockConflictError,
  LockLostError,
  LockRevokedError,
  LockTimeoutError,
} from './recipe/errors';
export type { LeaseState, SuspendedPolicy } from './recipe/hold';
export type { Lease } from './recipe/lease';
export type { LockOptions } from './recipe/lock-options';
export { isZooKeeperUnavailable } from './retry-later';
export { requestRevoke } from './revoke';
export type { SemaphoreOptions } from './semaphore';
export {
  acquireSemaphore,
  semaphore,
  semaphoreMutex,
  tryAcquireSemaphore,
  withSemaphore,
} from './semaphore';
