/**
 * A @nestjs/terminus health indicator for the ZooKeeper session: up while connected, down while
 * connecting, suspended, expired or closed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { isReadWriteState, type ZkClient } from '@zkrx/core';
import { ZK_CLIENT } from '../connection/tokens';

/**
 * Reports the ZooKeeper session's health to @nestjs/terminus (v11 `HealthIndicatorService`
 * API). List it in the providers of the module that has your health controller (with
 * `TerminusModule` imported and ZkModule global or imported). For a readiness probe, never a
 * liveness probe: it reports down while the connection is suspended, and a ZooKeeper blip
 * would then restart every instance at once (the client reconnects by itself).
 *
 * ## Example
 * ```ts
 * @Controller('health')
 * export class HealthController {
 *   constructor(
 *     private readonly health: HealthCheckService,
 *     private readonly zookeeper: ZkHealthIndicator,
 *   ) {}
 *
 *   @Get()
 *   @HealthCheck()
 *   check() {
 *     return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
 *   }
 * }
 * // Output: { status: 'ok', info: { zookeeper: { status: 'up', state: 'connected', sessionId: '...' } }, ... }
 * ```
 */
@Injectable()
export class ZkHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(ZK_CLIENT) private readonly client: ZkClient,
  ) {}

  /**
   * Up while the session is connected to a read-write server (`connected` or `reconnected`),
   * down otherwise — `read-only` included: no lock, election or partition can be taken there;
   * the result carries the session state and id.
   *
   * @param key The key of this indicator in the health check's result.
   * @return The indicator's result.
   */
  isHealthy<const Key extends string>(key: Key) {
    const indicator = this.health.check(key);
    const { state, sessionId } = this.client;
    const details = { state, sessionId: sessionId ?? null };
    return isReadWriteState(state) ? indicator.up(details) : indicator.down(details);
  }
}
