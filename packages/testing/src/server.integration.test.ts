/**
 * Integration tests of startZooKeeper: start, restart on the same port with the same data,
 * stop of its own process only, options, and start failures.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createZnode } from '../test/create-znode';
import { isAlive } from '../test/process-alive';
import { ZooKeeperStartError } from './errors';
import { fourLetterWord } from './four-letter-words';
import { startRawSession } from './raw-session';
import { startZooKeeper, type ZooKeeperServer } from './server';

const started: ZooKeeperServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((server) => server.close()));
});
async function start(options?: Parameters<typeof startZooKeeper>[0]) {
  const server = await startZooKeeper(options);
  started.push(server);
  return server;
}

const nodeCount = async (server: ZooKeeperServer) =>
  Number(/Node count: (\d+)/.exec(await server.fourLetterWord('srvr'))?.[1]);

describe('startZooKeeper', () => {
  it('passes systemProperties to the JVM beside the default JVM options', async () => {
    const server = await start({ systemProperties: { 'znode.container.checkIntervalMs': '200' } });
    const args = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0');
    expect(args).toContain('-Dznode.container.checkIntervalMs=200');
    expect(args).toContain('-XX:+UseSerialGC');
  });

  it('starts a standalone server on a free loopback port, with its own dir and fast ticks', async () => {
    const server = await start();
    expect(server.host).toBe('127.0.0.1');
    expect(server.connectString).toBe(`127.0.0.1:${server.port}`);
    expect(isAlive(server.pid)).toBe(true);
    expect(await fourLetterWord(server.connectString, 'ruok')).toBe('imok');
    expect(await server.fourLetterWord('srvr')).toMatch(/^Mode: standalone$/m);

    const conf = await server.fourLetterWord('conf');
    expect(conf).toContain(`dataDir=${server.dataDir}`);
    expect(conf).toMatch(/^tickTime=500$/m);
    expect(conf).toMatch(/^minSessionTimeout=1000$/m);
    expect(conf).toMatch(/^maxSessionTimeout=10000$/m);
    expect(conf).toMatch(/^maxClientCnxns=0$/m);
    expect(server.dataDir.startsWith(server.dir)).toBe(true);
    expect(readdirSync(server.dir).sort()).toEqual(['data', 'zoo.cfg', 'zookeeper.log']);

    const metrics = await server.mntr();
    expect(metrics.zk_server_state).toBe('standalone');
    expect(typeof metrics.zk_packets_sent).toBe('number');
    expect(metrics.zk_watch_count).toBe(0);
  });

  it('restarts on the same port with the same data, and sessions survive', async () => {
    const server = await start();
    const { port, dataDir } = server;
    const pidBefore = server.pid;
    const nodesBefore = await nodeCount(server);
    await createZnode(server.connectString, '/survives-restart');
    expect(await nodeCount(server)).toBe(nodesBefore + 1);
    const session = await startRawSession(server.connectString, { sessionTimeoutMs: 10_000 });

    await server.restart();

    expect(server.port).toBe(port);
    expect(server.dataDir).toBe(dataDir);
    expect(server.pid).not.toBe(pidBefore);
    expect(isAlive(pidBefore)).toBe(false);
    expect(await nodeCount(server)).toBe(nodesBefore + 1);
    await session.closed; // the restart dropped the connection...
    const resumed = await startRawSession(server.connectString, {
      sessionId: session.sessionId,
      password: session.password,
    });
    expect(resumed.expired).toBe(false); // ...but not the session
    expect(resumed.sessionId).toBe(session.sessionId);
    await resumed.close();
  });

  it('close() kills only its own process, removes its dir, and is idempotent', async () => {
    const [a, b] = await Promise.all([start(), start({ tmpfs: true, tickTime: 200 })]);
    expect(b.dir.startsWith(existsSync('/dev/shm') ? '/dev/shm/' : '/')).toBe(true);
    expect(await b.fourLetterWord('conf')).toMatch(/^minSessionTimeout=400$/m);

    const closing = a.close();
    expect(a.close()).toBe(closing);
    await closing;
    expect(isAlive(a.pid)).toBe(false);
    expect(existsSync(a.dir)).toBe(false);
    await expect(fourLetterWord(a.connectString, 'ruok', 1_000)).rejects.toThrow(/ECONNREFUSED/);
    await a.close();
    await expect(a.restart()).rejects.toThrow(/was closed/);

    expect(isAlive(b.pid)).toBe(true);
    expect(await b.fourLetterWord('ruok')).toBe('imok');
    await b.close();
    expect(existsSync(b.dir)).toBe(false);
  });

  it('passes session bounds and extraConfig to zoo.cfg', async () => {
    const server = await start({
      minSessionTimeoutMs: 1_500,
      maxSessionTimeoutMs: 6_000,
      extraConfig: { globalOutstandingLimit: '321' },
    });
    const conf = await server.fourLetterWord('conf');
    expect(conf).toMatch(/^minSessionTimeout=1500$/m);
    expect(conf).toMatch(/^maxSessionTimeout=6000$/m);
    const session = await startRawSession(server.connectString, { sessionTimeoutMs: 60_000 });
    expect(session.timeoutMs).toBe(6_000);
    await session.close();
  });

  it('fails with ZooKeeperStartError and the log tail when its port is taken', async () => {
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const address = squatter.address();
    if (!address || typeof address !== 'object') throw new Error('no port');
    try {
      const error = await startZooKeeper({ port: address.port }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ZooKeeperStartError);
      const startError = error as ZooKeeperStartError;
      expect(startError.name).toBe('ZooKeeperStartError');
      expect(startError.bindFailed).toBe(true);
      expect(startError.exitCode).not.toBe(0);
      expect(startError.logTail).toMatch(/Address already in use/);
      expect(startError.message).toContain(startError.logTail);
    } finally {
      squatter.close();
    }
  });

  it('fails fast with the log tail on a bad config', async () => {
    const error = await startZooKeeper({ extraConfig: { tickTime: 'soon' } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ZooKeeperStartError);
    expect((error as ZooKeeperStartError).bindFailed).toBe(false);
    expect((error as ZooKeeperStartError).logTail).toMatch(/soon/);
  });
});
