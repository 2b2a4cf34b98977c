/**
 * @zkrx/express — Express 4 and 5 middleware on Apache ZooKeeper: per-key request locks,
 * leader-only routes and a session health check.
 */

export type { LeaderOnlyHandler, LeaderOnlyOptions } from './leader-only';
export { leaderOnly } from './leader-only';
export type { ZkHealthBody, ZkHealthOptions } from './zk-health';
export { zkHealth } from './zk-health';
export type { ZkLockOptions } from './zk-lock';
export { leaseOf, zkLock } from './zk-lock';
