import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
// biome-ignore lint/style/useImportType: Nest injects HealthCheckService by the parameter's type
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { connectedClient } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { startApp } from '../../test/nest-apps';
import { ZkHealthIndicator } from '../terminus';

@Controller('health')
class HealthController {
  constructor(
    readonly health: HealthCheckService,
    readonly zookeeper: ZkHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
  }
}

describe('ZkHealthIndicator', () => {
  it('is up while the session is connected and down once it is not', async () => {
    const client = await connectedClient();
    const app = await startApp({
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [ZkHealthIndicator],
      zk: { client },
    });
    const controller = app.get(HealthController);
    await expect(controller.check()).resolves.toMatchObject({
      status: 'ok',
      info: { zookeeper: { status: 'up', state: 'connected', sessionId: client.sessionId } },
    });

    await client.close();
    const error = await controller.check().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceUnavailableException);
    expect((error as ServiceUnavailableException).getResponse()).toMatchObject({
      status: 'error',
      error: { zookeeper: { status: 'down', state: 'closed' } },
    });
    expect(app.get(ZkHealthIndicator).isHealthy('zk')).toEqual({
      zk: { status: 'down', state: 'closed', sessionId: expect.any(String) },
    });
  });
});
