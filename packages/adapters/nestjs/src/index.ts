/**
 * @zkrx/nestjs — zkrx for NestJS: ZkModule (the client per application), @Locked methods under a
 * ZooKeeper lock, @LeaderOnly scheduled jobs and LeaderService. Health: `@zkrx/nestjs/terminus`.
 */

export type {
  ZkModuleAsyncOptions,
  ZkModuleClientOption,
  ZkModuleOptions,
  ZkModuleRootOptions,
  ZkModuleSettings,
} from './connection/module-definition';
export { InjectZkClient, ZK_CLIENT } from './connection/tokens';
export { leaderSignal } from './leader/leader-context';
export type {
  LeaderOnlyOptions,
  LeaderOnlyOptionsOf,
  LeaderOnlyPathOf,
} from './leader/leader-only';
export { LeaderOnly } from './leader/leader-only';
export { LeaderService } from './leader/leader-service';
export type { CurrentLock } from './lock/lock-context';
export { currentLock, lockSignal } from './lock/lock-context';
export type { LockableMethod, LockedOptions, LockedOptionsOf, LockedPath } from './lock/locked';
export { Locked } from './lock/locked';
export { ZkModule } from './module/zk-module';
