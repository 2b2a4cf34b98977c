/**
 * ZkModule: one ZooKeeper client per Nest application, injectable, with the elections of
 * @LeaderOnly and the client's close tied to the application's lifecycle.
 */
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import {
  ZK_MODULE_OPTIONS,
  ZkConfigurableModule,
  type ZkModuleOptions,
} from '../connection/module-definition';
import { ZK_CLIENT, ZK_CONNECTION } from '../connection/tokens';
import { ZkConnection } from '../connection/zk-connection';
import { LeaderService } from '../leader/leader-service';
import { RetryLaterInterceptor } from '../lock/retry-later';

/**
 * The ZooKeeper module: provides the client (`@InjectZkClient()` / `ZK_CLIENT`), the
 * `LeaderService`, and what `@Locked` and `@LeaderOnly` need. Import it once, usually with
 * `isGlobal: true`.
 *
 * - `forRoot({ connect, ...createClientOptions })`: the module makes the client, waits for its
 *   first connection while the application boots, and closes it on application shutdown
 *   (`app.close()`, or a signal with `app.enableShutdownHooks()`): every lock this application
 *   holds and every election it stands in ends with the session.
 * - `forRoot({ client })`: the module uses your client and never closes it; on shutdown it
 *   still leaves its elections.
 * - `forRootAsync({ imports, useFactory, inject })`: either form, from your configuration.
 *
 * ## Example
 * ```ts
 * @Module({
 *   imports: [
 *     ScheduleModule.forRoot(),
 *     ZkModule.forRoot({ connect: process.env.ZK_CONNECT ?? '127.0.0.1:2181', isGlobal: true }),
 *   ],
 *   providers: [Reports],
 * })
 * export class AppModule {}
 * ```
 */
@Module({
  providers: [
    {
      provide: ZK_CONNECTION,
      inject: [ZK_MODULE_OPTIONS],
      useFactory: (options: ZkModuleOptions) => ZkConnection.open(options),
    },
    {
      provide: ZK_CLIENT,
      inject: [ZK_CONNECTION],
      useFactory: (connection: ZkConnection) => connection.client,
    },
    LeaderService,
    // @Locked's lock failures answer 409 / 503 with Retry-After on HTTP routes.
    { provide: APP_INTERCEPTOR, useClass: RetryLaterInterceptor },
  ],
  exports: [ZK_CLIENT, ZK_CONNECTION, LeaderService],
})
export class ZkModule extends ZkConfigurableModule implements OnApplicationShutdown {
  // Typed in the body: the connection stays out of the published declarations.
  private readonly connection: ZkConnection;

  constructor(@Inject(ZK_CONNECTION) connection: unknown) {
    super();
    this.connection = connection as ZkConnection;
  }

  /** Closes the client if the module made it (after every module was destroyed). */
  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
  }
}
