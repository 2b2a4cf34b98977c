/**
 * @zkrx/nestjs with only what `@Locked` needs: @zkrx/core and @zkrx/lock (no @zkrx/rwlock,
 * @zkrx/leader, @zkrx/fleet, @nestjs/schedule or @nestjs/terminus installed). ZkModule boots, a
 * @Locked method runs under its lock, and a read lock (which needs @zkrx/rwlock) says so.
 */
import { createRequire } from 'node:module';

export default async function smoke(load, { connect, root }) {
  const require = createRequire(`${process.cwd()}/`);
  for (const name of ['@zkrx/rwlock', '@zkrx/leader', '@zkrx/fleet', '@nestjs/schedule']) {
    let installed = true;
    try {
      require.resolve(name);
    } catch {
      installed = false;
    }
    if (installed) throw new Error(`${name} is installed: this smoke is about doing without it`);
  }
  await load('reflect-metadata');
  const { Injectable, Module } = await load('@nestjs/common');
  const { NestFactory } = await load('@nestjs/core');
  const { currentLock, Locked, ZkModule } = await load('@zkrx/nestjs');

  class Orders {
    async ship(orderId) {
      return { orderId, fencingToken: currentLock().fencingToken };
    }
    async readCatalog() {
      return 'read';
    }
  }
  decorateMethod(Orders, 'ship', [Locked((orderId) => `${root}/orders/${orderId}`)]);
  decorateMethod(Orders, 'readCatalog', [Locked(`${root}/catalog`, { lock: 'read' })]);
  Injectable()(Orders);

  class AppModule {}
  Module({ imports: [ZkModule.forRoot({ connect, isGlobal: true })], providers: [Orders] })(
    AppModule,
  );

  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  try {
    const shipped = await app.get(Orders).ship('42');
    if (typeof shipped.fencingToken !== 'number') throw new Error('ship ran without a lock');
    const refused = await app
      .get(Orders)
      .readCatalog()
      .then(
        () => undefined,
        (error) => error,
      );
    if (refused?.code !== 'BadArguments' || !/npm install @zkrx\/rwlock/.test(refused.message)) {
      throw new Error(`a read lock without @zkrx/rwlock: ${refused}`);
    }
    return `@zkrx/nestjs with core and lock only: @Locked ran (token ${shipped.fencingToken}); lock: 'read' asks for @zkrx/rwlock`;
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
