/**
 * GET /health/ready (ZooKeeper's session, for a readiness probe) and GET /health/live (the
 * process only, for a liveness probe: a ZooKeeper blip must not restart every instance).
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

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
  }

  @Get('live')
  live() {
    return { status: 'ok' };
  }
}
