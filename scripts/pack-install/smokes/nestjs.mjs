/**
 * @zkrx/nestjs from its tarball, with the Nest major the project installed: an application
 * context with ZkModule, a @Locked method, a @LeaderOnly job on @nestjs/schedule's @Interval,
 * and ZkHealthIndicator (from @zkrx/nestjs/terminus) through @nestjs/terminus. Decorators are
 * applied as TypeScript's output applies them, so the smoke is plain JavaScript.
 */
import { readFileSync } from 'node:fs';

export default async function smoke(load, { connect, root }) {
  await load('reflect-metadata');
  const { Inject, Injectable, Module } = await load('@nestjs/common');
  const { NestFactory } = await load('@nestjs/core');
  const { Interval, ScheduleModule } = await load('@nestjs/schedule');
  const { HealthCheckService, TerminusModule } = await load('@nestjs/terminus');
  const { currentLock, LeaderOnly, LeaderService, Locked, ZkModule } = await load('@zkrx/nestjs');
  const { ZkHealthIndicator } = await load('@zkrx/nestjs/terminus');

  let ticked;
  const twoTicks = new Promise((resolve) => {
    let count = 0;
    ticked = () => ++count === 2 && resolve();
  });
  class Jobs {
    async ship(orderId) {
      return { orderId, fencingToken: currentLock().fencingToken };
    }
    tick() {
      ticked();
    }
  }
  decorateMethod(Jobs, 'ship', [Locked((orderId) => `${root}/orders/${orderId}`)]);
  decorateMethod(Jobs, 'tick', [Interval(20), LeaderOnly(`${root}/election`)]);
  Injectable()(Jobs);

  class Health {
    constructor(health, zookeeper) {
      this.health = health;
      this.zookeeper = zookeeper;
    }
    check() {
      return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
    }
  }
  Inject(HealthCheckService)(Health, undefined, 0);
  Inject(ZkHealthIndicator)(Health, undefined, 1);
  Injectable()(Health);

  class AppModule {}
  Module({
    imports: [
      ZkModule.forRoot({ connect, isGlobal: true }),
      ScheduleModule.forRoot(),
      TerminusModule,
    ],
    providers: [Jobs, Health, ZkHealthIndicator],
  })(AppModule);

  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    await app.get(LeaderService).whenLeader(`${root}/election`);
    const shipped = await app.get(Jobs).ship('42');
    if (typeof shipped.fencingToken !== 'number') throw new Error('ship ran without a lock');
    await twoTicks;
    const health = await app.get(Health).check();
    if (health.status !== 'ok' || health.info.zookeeper.status !== 'up') {
      throw new Error(`health: ${JSON.stringify(health)}`);
    }
    const versions = ['@nestjs/core', '@nestjs/schedule', '@nestjs/terminus']
      .map((name) => `${name}@${installedVersion(name)}`)
      .join(', ');
    return `@zkrx/nestjs on ${versions}: @Locked (token ${shipped.fencingToken}), @LeaderOnly @Interval ran, health up`;
  } finally {
    await app.close();
  }
}

/** What TypeScript emits for method decorators (`__decorate`), without the helper. */
function decorateMethod(target, name, decorators) {
  let descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
  for (const decorator of [...decorators].reverse()) {
    descriptor = decorator(target.prototype, name, descriptor) ?? descriptor;
  }
  Object.defineProperty(target.prototype, name, descriptor);
}

function installedVersion(name) {
  return JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version;
}
