import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { childrenOf, connectedClient, IntervalLog, lockPath, sleep } from '@zkrx/test-support';
import { startProxy, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { clientOf, closeApp, startApp } from '../../test/nest-apps';
import { InjectZkClient, LeaderService, Locked, lockSignal, ZK_CLIENT, ZkModule } from '../index';

/** Something a configuration module provides. */
class ZooKeeperConfig {
  constructor(
    readonly connect: string,
    readonly id: string,
  ) {}
}

function holderService(path: string, log: IntervalLog) {
  @Injectable()
  class Holder {
    constructor(
      @InjectZkClient() readonly client: ZkClient,
      // No @Inject: resolved from the parameter's type (emitDecoratorMetadata in tests too).
      readonly leader: LeaderService,
    ) {}

    @Locked(path)
    async hold(ms: number): Promise<boolean> {
      const record = log.enter('hold');
      await sleep(ms);
      log.exit(record);
      return lockSignal()?.aborted === false;
    }
  }
  return Holder;
}

describe('ZkModule', () => {
  it('provides its client under ZK_CLIENT and @InjectZkClient, and LeaderService by type', async () => {
    const Holder = holderService(lockPath(), new IntervalLog(1));
    const app = await startApp({ providers: [Holder] });
    const holder = app.get(Holder);
    expect(holder.client).toBe(app.get(ZK_CLIENT));
    expect(holder.leader).toBe(app.get(LeaderService));
    expect(holder.client.state).toBe('connected');
    await expect(holder.hold(1)).resolves.toBe(true);
  });

  it('forRootAsync takes its options from a configuration provider', async () => {
    const { connectString } = await testZooKeeper();
    @Module({
      providers: [
        { provide: ZooKeeperConfig, useValue: new ZooKeeperConfig(connectString, 'cfg') },
      ],
      exports: [ZooKeeperConfig],
    })
    class ConfigModule {}
    const path = lockPath('election');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ZooKeeperConfig],
          useFactory: (config: ZooKeeperConfig) => ({
            connect: config.connect,
            sessionTimeoutMs: 4_000,
            id: config.id,
          }),
          isGlobal: true,
        }),
      ],
    }).compile();
    await moduleRef.init();
    try {
      const client = moduleRef.get<ZkClient>(ZK_CLIENT);
      expect(client.connectString).toBe(connectString);
      expect(client.state).toBe('connected');
      await moduleRef.get(LeaderService).join(path);
      await moduleRef.get(LeaderService).whenLeader(path);
      const [node] = await client.promises.children(path);
      expect((await client.promises.get(`${path}/${node}`)).data.toString()).toBe('cfg');
    } finally {
      await moduleRef.close();
    }
    expect(moduleRef.get<ZkClient>(ZK_CLIENT).isClosed).toBe(true);
  });

  it('never closes a client it was given; it still leaves its elections', async () => {
    const client = await connectedClient();
    const path = lockPath('election');
    const Holder = holderService(lockPath(), new IntervalLog(1));
    const app = await startApp({ providers: [Holder], zk: { client } });
    expect(app.get(ZK_CLIENT)).toBe(client);
    await app.get(LeaderService).join(path);
    await app.get(LeaderService).whenLeader(path);
    await app.get(Holder).hold(1);
    await closeApp(app);
    expect(client.isClosed).toBe(false);
    expect(client.state).toBe('connected');
    expect(await childrenOf(client, path)).toEqual([]);
    await expect(client.promises.exists('/')).resolves.not.toBeNull();
  });

  it('closes the client it made when the application shuts down', async () => {
    const app = await startApp();
    const client = clientOf(app);
    expect(client.state).toBe('connected');
    await closeApp(app);
    expect(client.isClosed).toBe(true);
    expect(client.state).toBe('closed');
  });

  it('fails the boot with ConnectTimeout when ZooKeeper cannot be reached, closing its client', async () => {
    const moduleRef = Test.createTestingModule({
      imports: [ZkModule.forRoot({ connect: '127.0.0.1:1', connectTimeoutMs: 300 })],
    });
    const error = await moduleRef.compile().catch((caught: unknown) => caught);
    expect(isZkError(error, ZkErrorCode.ConnectTimeout)).toBe(true);
    // What the log shows a new user: where it looked, and what to do.
    expect((error as Error).message).toMatch(
      /^ZkModule could not start the application: .*127\.0\.0\.1:1 .*npx @zkrx\/cli dev-server.*`connect`/,
    );
    expect(isZkError((error as Error).cause, ZkErrorCode.ConnectTimeout)).toBe(true);
  });

  it('waitForConnection: false boots at once; @Locked answers unavailable until connected', async () => {
    const path = lockPath();
    const Holder = holderService(path, new IntervalLog(1));
    const { connectString } = await testZooKeeper();
    const proxy = await startProxy(connectString);
    proxy.refuse(true);
    try {
      const app = await startApp({
        providers: [Holder],
        zk: { connect: proxy.connectString, waitForConnection: false },
      });
      // Not connected: at once, not after waiting for a connection (503 on a route).
      await expect(app.get(Holder).hold(1)).rejects.toSatisfy((error: unknown) =>
        isZkError(error, ZkErrorCode.ConnectionLoss),
      );
      proxy.refuse(false);
      await clientOf(app).connected();
      await expect(app.get(Holder).hold(1)).resolves.toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('rejects options that are neither { client } nor client options', async () => {
    const error = await Test.createTestingModule({
      imports: [ZkModule.forRoot({ client: {} as ZkClient })],
    })
      .compile()
      .catch((caught: unknown) => caught);
    expect(isZkError(error, ZkErrorCode.BadArguments)).toBe(true);
  });

  it('a provider whose class has @Locked methods needs ZkModule in its application', async () => {
    const path = lockPath();
    @Injectable()
    class Lonely {
      @Locked(path)
      async work(): Promise<void> {}
    }
    const error = await startApp({ withoutZk: true, providers: [Lonely] }).catch(
      (caught: unknown) => caught,
    );
    expect(String(error)).toMatch(/can't resolve dependencies of the Lonely/);
    expect(String(error)).toContain('@Locked needs ZkModule');
  });
});
