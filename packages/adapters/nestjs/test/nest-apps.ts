/**
 * Nest applications on the test ZooKeeper: each a testing module compiled and initialised with
 * its own ZkModule (its own session), closed after the test.
 */
import type {
  DynamicModule,
  ForwardReference,
  INestApplication,
  Provider,
  Type,
} from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { ZkClient } from '@zkrx/core';
import { testZooKeeper } from '@zkrx/testing';
import { afterEach } from 'vitest';
import { ZK_CLIENT, ZkModule, type ZkModuleRootOptions } from '../src/index';

const open = new Set<TestingModule | INestApplication>();

afterEach(async () => {
  const apps = [...open];
  open.clear();
  await Promise.all(apps.map((app) => app.close()));
});

export interface TestAppOptions {
  /** Providers of the application (services with @Locked / @LeaderOnly methods). */
  providers?: Provider[];
  /** More imports (ScheduleModule, TerminusModule, ...). */
  imports?: (Type | DynamicModule | Promise<DynamicModule> | ForwardReference)[];
  /** Controllers. */
  controllers?: Type[];
  /** ZkModule options, instead of a client of its own on the test server. */
  zk?: Partial<ZkModuleRootOptions>;
  /** Leave ZkModule out. */
  withoutZk?: boolean;
}

/** The ZkModule of a test application: its own client on the test server, global. */
export async function zkModule(options: Partial<ZkModuleRootOptions> = {}): Promise<DynamicModule> {
  const { connectString } = await testZooKeeper();
  return ZkModule.forRoot({
    connect: connectString,
    sessionTimeoutMs: 4_000,
    isGlobal: true,
    ...options,
  } as ZkModuleRootOptions);
}

/** The testing module of an application: its ZkModule (unless left out), imports, providers. */
async function compile(options: TestAppOptions): Promise<TestingModule> {
  const imports = [...(options.imports ?? [])];
  if (!options.withoutZk) imports.unshift(await zkModule(options.zk));
  return Test.createTestingModule({
    imports,
    providers: options.providers ?? [],
    controllers: options.controllers ?? [],
  }).compile();
}

/** Compiles and initialises a Nest application (closed after the test). */
export async function startApp(options: TestAppOptions = {}): Promise<TestingModule> {
  const app = await compile(options);
  open.add(app);
  await app.init();
  return app;
}

/** An application serving HTTP on a free port (Express platform), closed after the test. */
export async function startHttpApp(
  options: TestAppOptions = {},
): Promise<{ app: INestApplication; url: string }> {
  const app = (await compile(options)).createNestApplication({ logger: false });
  open.add(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

/** `count` applications with the same providers, each with its own session. */
export function startApps(count: number, options: TestAppOptions = {}): Promise<TestingModule[]> {
  return Promise.all(Array.from({ length: count }, () => startApp(options)));
}

/** Closes an application now (instead of after the test). */
export async function closeApp(app: TestingModule | INestApplication): Promise<void> {
  open.delete(app);
  await app.close();
}

/** The application's ZkClient. */
export function clientOf(app: TestingModule): ZkClient {
  return app.get<ZkClient>(ZK_CLIENT);
}
