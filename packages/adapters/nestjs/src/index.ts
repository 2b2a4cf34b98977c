/**
 * @zkrx/nestjs — zkrx for NestJS: ZkModule (the client per application), @Locked methods under a
 * ZooKeeper lock, @LeaderOnly scheduled jobs and LeaderService. Health: `@zkrx/nestjs/terminus`.
 */

export { leaderSignal } from './leader-context';
export type { LeaderOnlyOptions, LeaderOnlyOptionsOf, LeaderOnlyPathOf } from './leader-only';
export { LeaderOnly } from './leader-only';
export { LeaderService } from './leader-service';
export type { CurrentLock } from './lock-context';
export { currentLock, lockSignal } from './lock-context';
export type { LockableMethod, LockedOptions, LockedOptionsOf, LockedPath } from './locked';
export { Locked } from './locked';
export type {
  ZkModuleAsyncOptions,
  ZkModuleClientOption,
  ZkModuleOptions,
  ZkModuleRootOptions,
  ZkModuleSettings,
} from './module-definition';
export { InjectZkClient, ZK_CLIENT } from './tokens';
export { ZkModule } from './zk-module';
