/**
 * @zkrx/rwlock — a herd-free, fair ZooKeeper read-write lock as RxJS observables, sharing
 * paths with Curator's InterProcessReadWriteLock and kazoo's ReadLock/WriteLock.
 */

export type { Lease, LeaseState, LockOptions } from '@zkrx/lock';
export { LockLostError, LockTimeoutError } from '@zkrx/lock';
export type { LockKind } from './rwlock';
export {
  acquireRead,
  acquireWrite,
  LockUpgradeError,
  lockKinds,
  readLock,
  tryAcquireRead,
  tryAcquireWrite,
  withReadLock,
  withWriteLock,
  writeLock,
} from './rwlock';
