/**
 * GET /health: the ZooKeeper session's health through @nestjs/terminus.
 */
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ZkHealthIndicator } from '@zkrx/nestjs/terminus';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zookeeper: ZkHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
  }
}
