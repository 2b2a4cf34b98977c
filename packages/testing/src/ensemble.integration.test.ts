/**
 * Integration tests of startEnsemble against three real servers: quorum, replication,
 * session expiry across members, leader failover, rejoin, cleanup.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createZnode } from '../test/create-znode';
import { isAlive } from '../test/process-alive';
import { type Ensemble, startEnsemble } from './ensemble';
import { expireSession } from './expire-session';
import { parseServerMode } from './four-letter-words';
import { startRawSession } from './raw-session';

const modes = (ensemble: Ensemble) =>
  Promise.all(
    ensemble.servers.map(async (server) =>
      server.running ? parseServerMode(await server.fourLetterWord('srvr')) : 'stopped',
    ),
  );

describe('startEnsemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({
      size: 3,
      systemProperties: { 'znode.container.checkIntervalMs': '200' },
    });
  });
  afterAll(() => ensemble?.close());

  it('starts a quorum of 3 on loopback with one leader', async () => {
    expect(ensemble.servers).toHaveLength(3);
    expect(ensemble.connectString).toBe(
      ensemble.servers.map((server) => `127.0.0.1:${server.port}`).join(','),
    );
    const ports = ensemble.servers.flatMap((s) => [s.port, s.quorumPort, s.electionPort]);
    expect(new Set(ports).size).toBe(9);
    expect(ensemble.servers.map((server) => server.serverId)).toEqual([1, 2, 3]);

    const current = await modes(ensemble);
    expect(current.filter((mode) => mode === 'leader')).toHaveLength(1);
    expect(current.filter((mode) => mode === 'follower')).toHaveLength(2);
    expect(current.indexOf('leader')).toBe(await ensemble.leaderIndex());
    // systemProperties reach every member's JVM, beside the ensemble's own.
    for (const server of ensemble.servers) {
      const args = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0');
      expect(args).toContain('-Dznode.container.checkIntervalMs=200');
      expect(args).toContain('-Dzookeeper.fastleader.maxNotificationInterval=2000');
    }
    const conf = await ensemble.servers[0]!.fourLetterWord('conf');
    expect(conf).toMatch(/^serverId=1$/m);
    expect(conf).toMatch(/^tickTime=500$/m);
  });

  it('replicates: a znode created through one member is counted by all', async () => {
    const count = async (index: number) =>
      Number(/Node count: (\d+)/.exec(await ensemble.servers[index]!.fourLetterWord('srvr'))?.[1]);
    const before = await count(2);
    await createZnode(ensemble.servers[0]!.connectString, '/replicated');
    // Followers apply the commit asynchronously: wait for each to count it, however late.
    for (const index of [0, 1, 2])
      await vi.waitUntil(async () => (await count(index)) === before + 1);
  });

  it('expires a session held on one member through another', async () => {
    const session = await startRawSession(ensemble.servers[0]!.connectString);
    await expireSession(
      { connectString: ensemble.connectString, ...session },
      { connectString: ensemble.servers[1]!.connectString },
    );
    await session.closed; // the member holding it dropped the connection
    for (const server of ensemble.servers) {
      const again = await startRawSession(server.connectString, session);
      expect(again.expired).toBe(true);
    }
  });

  it('elects a new leader when the leader is stopped, and takes it back as a follower', async () => {
    const leader = await ensemble.leaderIndex();
    const oldPid = ensemble.servers[leader]!.pid;
    const started = Date.now();
    await ensemble.stopServer(leader);
    expect(ensemble.servers[leader]!.running).toBe(false);
    expect(ensemble.servers[leader]!.pid).toBeUndefined();
    expect(isAlive(oldPid)).toBe(false);
    expect(existsSync(ensemble.servers[leader]!.dataDir)).toBe(true);

    const newLeader = await ensemble.leaderIndex();
    const electedAfter = Date.now() - started;
    expect(newLeader).not.toBe(leader);
    // The other member serves as a follower once it has synced with the new leader, which can
    // come after the leader already says so: a loaded suite run saw no follower yet.
    await vi.waitUntil(
      async () => (await modes(ensemble)).filter((mode) => mode === 'follower').length === 1,
    );
    expect(await modes(ensemble)).toEqual(
      ensemble.servers.map((server) =>
        server.index === leader ? 'stopped' : server.index === newLeader ? 'leader' : 'follower',
      ),
    );
    console.info(`new leader elected ${electedAfter} ms after stopping the old one`);

    await ensemble.startServer(leader);
    expect(ensemble.servers[leader]!.running).toBe(true);
    expect(isAlive(ensemble.servers[leader]!.pid)).toBe(true);
    expect(parseServerMode(await ensemble.servers[leader]!.fourLetterWord('srvr'))).toBe(
      'follower',
    );
    expect(await ensemble.leaderIndex()).toBe(newLeader);
  });

  it('restarts a follower through its own handle; it rejoins with a new process', async () => {
    const leader = await ensemble.leaderIndex();
    const follower = ensemble.servers.find((server) => server.index !== leader)!;
    const pidBefore = follower.pid;
    await follower.restart();
    expect(follower.pid).not.toBe(pidBefore);
    expect(isAlive(pidBefore)).toBe(false);
    expect(['leader', 'follower']).toContain(
      parseServerMode(await follower.fourLetterWord('srvr')),
    );
  });

  it('close() stops every member and removes the directory', async () => {
    const pids = ensemble.servers.map((server) => server.pid);
    await ensemble.close();
    await ensemble.close();
    expect(pids.every((pid) => pid !== undefined && !isAlive(pid))).toBe(true);
    expect(existsSync(ensemble.dir)).toBe(false);
    await expect(ensemble.startServer(0)).rejects.toThrow(/closed/);
  });
});
