/**
 * The options of ZkModule and the module's static methods (`forRoot`, `forRootAsync`), built
 * with Nest's ConfigurableModuleBuilder.
 */
import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ZkClient, ZkClientOptions } from '@zkrx/core';
import type { SuspendedPolicy } from '@zkrx/lock';

/** What every form of the module's options may add. */
export interface ZkModuleSettings {
  /**
   * Wait for the first connection while the application boots (default `true`): boot then fails
   * with ZkError `ConnectTimeout` when ZooKeeper cannot be reached within `connectTimeoutMs`.
   */
  waitForConnection?: boolean;
  /**
   * This application's id: its participant id in elections (@LeaderOnly, LeaderService) and its
   * member id in partitions (FleetService), unless a call gives its own. Default `hostname:pid`.
   */
  id?: string;
  /**
   * What this application's locks (@Locked), elections and partitions do while the connection
   * is suspended, unless a decorator or call gives its own: `release` (default) stops at once, so
   * that at most one instance works at any instant; `continue` goes on until the session is known
   * to be lost (fewer stops on network blips, a window in which two may work).
   */
  onSuspended?: SuspendedPolicy;
}

/** A client made by the application: the module uses it and never closes it. */
export interface ZkModuleClientOption {
  client: ZkClient;
}

/**
 * The module's options: a client of your own (`{ client }`, never closed by the module) or the
 * options of `createClient` (the module makes the client and closes it on application shutdown),
 * plus {@link ZkModuleSettings}.
 */
export type ZkModuleOptions = (ZkModuleClientOption | ZkClientOptions) & ZkModuleSettings;

export const {
  ConfigurableModuleClass: ZkConfigurableModule,
  MODULE_OPTIONS_TOKEN: ZK_MODULE_OPTIONS,
  OPTIONS_TYPE: ZK_MODULE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ZK_MODULE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ZkModuleOptions>({ moduleName: 'Zk' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** The options of `ZkModule.forRoot`: the module's options plus `isGlobal`. */
export type ZkModuleRootOptions = typeof ZK_MODULE_OPTIONS_TYPE;

/** The options of `ZkModule.forRootAsync`: `imports`, `useFactory`, `inject`, ... plus `isGlobal`. */
export type ZkModuleAsyncOptions = typeof ZK_MODULE_ASYNC_OPTIONS_TYPE;
