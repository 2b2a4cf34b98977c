/**
 * Integration tests of an ensemble's dynamic reconfiguration against real servers: the
 * configuration clients read, servers added, removed and replaced, a stopped member starting
 * again with the current configuration, names kept, and the errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ensemble, startEnsemble } from './ensemble';
import { InvalidOptionError } from './errors';
import { parseServerMode } from './four-letter-words';
import { startRawSession } from './raw-session';

const ids = async (ensemble: Ensemble) =>
  (await ensemble.configuration()).servers.map((server) => server.serverId);

describe('an ensemble with reconfiguration', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it("serves a configuration that names every member's client address", async () => {
    const configuration = await ensemble.configuration();
    expect(configuration.servers).toEqual(
      ensemble.servers.map((server) => ({
        serverId: server.serverId,
        role: 'participant',
        clientAddress: server.connectString,
      })),
    );
    expect(configuration.version).toMatch(/^[0-9a-f]+$/);
    expect(ensemble.servers.every((server) => server.inConfiguration)).toBe(true);
  });

  it('adds a server that serves and is named by the configuration and the connect string', async () => {
    const before = (await ensemble.configuration()).version;
    const added = await ensemble.addServer();
    expect(added.serverId).toBe(4);
    expect(added.index).toBe(3);
    expect(ensemble.servers[3]).toBe(added);
    expect(await ids(ensemble)).toEqual([1, 2, 3, 4]);
    expect((await ensemble.configuration()).version).not.toBe(before);
    expect(['leader', 'follower']).toContain(parseServerMode(await added.fourLetterWord('srvr')));
    expect(ensemble.connectString.split(',')).toContain(added.connectString);
  });

  it('removes a server once its sessions left, or at the drain timeout, and stops it', async () => {
    // A raw session follows nothing: it stays on its server until the drain times out.
    const session = await startRawSession(ensemble.servers[0]!.connectString);
    await ensemble.removeServer(0, { drainTimeoutMs: 500 });
    await session.closed;
    expect(ensemble.servers[0]!.running).toBe(false);
    expect(ensemble.servers[0]!.inConfiguration).toBe(false);
    expect(await ids(ensemble)).toEqual([2, 3, 4]);
    expect(ensemble.connectString.split(',')).not.toContain(ensemble.servers[0]!.connectString);
    await expect(ensemble.startServer(0)).rejects.toThrow(/removed from the configuration/);
  });

  it('leaves a removed server running when asked, serving its sessions', async () => {
    const added = await ensemble.addServer();
    const session = await startRawSession(added.connectString);
    await ensemble.removeServer(added.index, { stop: false });
    expect(added.running).toBe(true);
    expect(added.inConfiguration).toBe(false);
    expect(await ids(ensemble)).not.toContain(added.serverId);
    await session.close();
    await added.stop();
  });

  it('replaces a server: the new one is in, the old one out and stopped', async () => {
    const replaced = ensemble.servers[1]!;
    const added = await ensemble.replaceServer(1, { drainTimeoutMs: 0 });
    expect(replaced.running).toBe(false);
    const configuration = await ids(ensemble);
    expect(configuration).toContain(added.serverId);
    expect(configuration).not.toContain(replaced.serverId);
  });

  it('starts a stopped member again with the configuration it was stopped in', async () => {
    const member = ensemble.servers.find((server) => server.inConfiguration && server.running)!;
    await member.restart();
    expect(['leader', 'follower']).toContain(parseServerMode(await member.fourLetterWord('srvr')));
    expect(await ids(ensemble)).toContain(member.serverId);
  });

  it('writes a host name as it was given', async () => {
    const added = await ensemble.addServer({ host: 'localhost' });
    expect(added.connectString).toBe(`localhost:${added.port}`);
    const line = (await ensemble.configuration()).text
      .split('\n')
      .find((entry) => entry.startsWith(`server.${added.serverId}=`));
    expect(line).toBe(
      `server.${added.serverId}=localhost:${added.quorumPort}:${added.electionPort}:participant;localhost:${added.port}`,
    );
  });

  it('refuses bad options before anything changes', async () => {
    const before = await ids(ensemble);
    await expect(ensemble.addServer({ role: 'leader' as never })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(ensemble.removeServer(2, { drainTimeoutMs: -1 })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(ensemble.removeServer(99)).rejects.toThrow(RangeError);
    expect(await ids(ensemble)).toEqual(before);
  });
});

describe('an ensemble without reconfiguration', () => {
  it('refuses to change its membership', async () => {
    const ensemble = await startEnsemble({ size: 1 });
    try {
      const error = await ensemble.addServer().catch((caught: unknown) => caught);
      expect(InvalidOptionError.isInstance(error)).toBe(true);
      expect((error as InvalidOptionError).option).toBe('reconfig');
      await expect(ensemble.removeServer(0)).rejects.toThrow(InvalidOptionError);
    } finally {
      await ensemble.close();
    }
  });
});
