/**
 * @zkrx/nestjs/testing — ZkTestingModule: unit tests of services that use @Locked, @LeaderOnly,
 * @ForEachOwnedItem and LeaderService, with no ZooKeeper (the locks, leadership and items as
 * the test decides). For tests against a real server: `@zkrx/testing`.
 */

export type { GuardedWrite, ZkTestingOptions } from './testing/test-options';
export { ZkTesting, ZkTestingModule } from './testing/zk-testing-module';
