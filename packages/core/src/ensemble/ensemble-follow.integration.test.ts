/**
 * Following the ensemble's dynamic configuration against a real reconfigurable ensemble: the
 * servers followed, moves without a suspension when a server leaves, names kept as names, the
 * chroot kept after an expiry, one configuration watch at most and none after close,
 * `followEnsemble: false`.
 */
import {
  createTestCertificates,
  type Ensemble,
  expireSession,
  startEnsemble,
  type TestCertificates,
} from '@zkrx/testing';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectedClient,
  logCollector,
  memberOf,
  openClient,
  proxyTo,
  record,
  rejectionOf,
  statesOf,
  testRoot,
  transportName,
  waitFor,
  watchedPaths,
} from '../../test/support';
import type { ZkClient } from '../client/client';
import type { EnsembleView } from './ensemble-follower';

/** Resolves once the client follows exactly `hosts` (order aside), read from the configuration. */
function follows(client: ZkClient, hosts: readonly string[]): Promise<EnsembleView> {
  const wanted = [...hosts].sort().join(',');
  return firstValueFrom(
    client.ensemble$.pipe(
      filter(
        (view) => view.configVersion !== undefined && [...view.hosts].sort().join(',') === wanted,
      ),
    ),
  );
}

/**
 * Resolves once the client has moved by itself `count` times — or was handed off (its server
 * dropped it) instead, which the caller's checks then report rather than wait out the test.
 */
function moved(client: ZkClient, count = 1): Promise<EnsembleView> {
  return firstValueFrom(
    client.ensemble$.pipe(filter((view) => view.moves >= count || view.handOffs > 0)),
  );
}

describe.runIf(transportName === 'typescript')('following a reconfigurable ensemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it('follows the configuration and moves off a removed server before it stops, never suspended', async () => {
    // Its server must not be the leader: a client on the removed leader is dropped with every
    // other at the change (the hand-off of the next test), before any move could be made. Nor
    // may its list grow before the removal: a client that rebalanced (or was moving) onto an
    // added server would move from another server, or twice. So `address` leaves the leader
    // out, and the client connects to the others, as the configuration will name them.
    const leader = ensemble.servers[await ensemble.leaderIndex()]!;
    const log = logCollector();
    const followed = () =>
      ensemble.connectString.split(',').filter((host) => host !== leader.connectString);
    const client = await connectedClient({
      connect: followed().join(','),
      sessionTimeoutMs: 6_000,
      followEnsemble: {
        maxDelayMs: 100,
        address: (server) =>
          `${server.host}:${server.port}` === leader.connectString ? undefined : server,
      },
      logger: log.logger,
      logLevel: 'debug',
    });
    const root = await testRoot(ensemble.connectString);
    const sessionId = client.sessionId!;
    const node = await client.promises.create(`${root}/alive`, '', { mode: 'ephemeral' });
    const session = record(client.session$);
    const first = await follows(client, followed());
    expect(first.configVersion).toMatch(/^[0-9a-f]+$/);
    expect(client.hosts).toEqual(first.hosts);

    const before = await memberOf(ensemble, client);
    // Removing its server waits for the client to leave it, then stops the server.
    await ensemble.removeServer(before);
    expect(ensemble.servers[before]!.running).toBe(false);
    const view = await moved(client);
    expect(view.moves, log.text()).toBe(1);
    const after = await memberOf(ensemble, client);
    expect(after).not.toBe(before);
    expect(view.server).toBe(ensemble.servers[after]!.connectString);
    expect(client.sessionId).toBe(sessionId);
    expect((await client.promises.exists(node.path))?.ephemeralOwner).toBe(sessionId);

    // A server added is followed too.
    await ensemble.addServer();
    await follows(client, followed());
    expect(client.sessionId).toBe(sessionId);
    expect(statesOf(session), log.text()).toEqual(['connected']);
  });

  it("rides out the leader's removal, which drops every server's clients for a moment", async () => {
    const log = logCollector();
    const clients = await Promise.all(
      ensemble.servers
        .filter((server) => server.inConfiguration)
        .map((server) =>
          connectedClient({
            connect: server.connectString,
            sessionTimeoutMs: 6_000,
            followEnsemble: { maxDelayMs: 100 },
            logger: log.logger,
            logLevel: 'debug',
          }),
        ),
    );
    const sessions = clients.map((client) => record(client.session$));
    const ids = clients.map((client) => client.sessionId);
    await Promise.all(clients.map((client) => follows(client, ensemble.connectString.split(','))));
    const leader = await ensemble.leaderIndex();
    await ensemble.removeServer(leader);
    expect(await ensemble.leaderIndex()).not.toBe(leader);
    // Every client is on a server of the configuration, on its session, never suspended.
    for (const [index, client] of clients.entries()) {
      await waitFor(async () => (await ensemble.serverOf(client.sessionId!)) !== undefined);
      expect(client.sessionId).toBe(ids[index]);
      expect(statesOf(sessions[index]!), log.text()).toEqual(['connected']);
    }
  });

  it('rebalances onto added servers: some clients move, none is suspended', async () => {
    const clients = await Promise.all(
      Array.from({ length: 30 }, () =>
        connectedClient({
          connect: ensemble.connectString,
          sessionTimeoutMs: 6_000,
          followEnsemble: { maxDelayMs: 200 },
        }),
      ),
    );
    const sessions = clients.map((client) => record(client.session$));
    await Promise.all(clients.map((client) => follows(client, ensemble.connectString.split(','))));
    const added = [await ensemble.addServer(), await ensemble.addServer()];
    const hosts = ensemble.connectString.split(',');
    await Promise.all(clients.map((client) => follows(client, hosts)));
    // Each client decides once per change (with probability 1 − old/new): at least one of 30
    // moves (all stay with probability below 1e-6).
    await waitFor(async () => {
      const counts = await Promise.all(
        added.map(async (server) => (await server.fourLetterWord('cons')).split('sid=').length - 1),
      );
      return counts.some((count) => count > 0);
    });
    for (const session of sessions) expect(statesOf(session)).toEqual(['connected']);
  });

  it('keeps one watch on the configuration per session, and none once closed', async () => {
    const client = await connectedClient({
      connect: ensemble.connectString,
      followEnsemble: { maxDelayMs: 0 },
    });
    const sessionId = client.sessionId!;
    await follows(client, ensemble.connectString.split(','));
    // Changes and reconnections read the configuration again: still one watch.
    await ensemble.addServer();
    await follows(client, ensemble.connectString.split(','));
    // The added server may take it (a rebalancing move, at any time after the list grew): its
    // watches are read on the server `cons` shows it on, the two read together.
    let watched: readonly string[] = [];
    await waitFor(async () => {
      const index = await ensemble.serverOf(sessionId);
      const server = index === undefined ? undefined : ensemble.servers[index]!;
      watched = server ? await watchedPaths(server.connectString, sessionId) : [];
      return watched.includes('/zookeeper/config');
    });
    expect(watched.filter((path) => path === '/zookeeper/config')).toHaveLength(1);
    await client.close();
    // None left on any server: a server the client moved off drops that connection's watches
    // once it sees the socket close, which may come after the close's answer from the other.
    await waitFor(async () => {
      for (const member of ensemble.servers.filter((candidate) => candidate.running)) {
        if ((await watchedPaths(member.connectString, sessionId)).length > 0) return false;
      }
      return true;
    });
  });

  it('with followEnsemble: false, keeps its connect string and sets no watch', async () => {
    const first = ensemble.servers.find((server) => server.inConfiguration && server.running)!;
    const client = await connectedClient({
      connect: first.connectString,
      sessionTimeoutMs: 6_000,
      followEnsemble: false,
    });
    await ensemble.addServer();
    expect(client.hosts).toEqual([first.connectString]);
    expect(await watchedPaths(first.connectString, client.sessionId!)).toEqual([]);
    // Its server leaves and stops: the client knows no other, and stays suspended.
    await ensemble.removeServer(first.index, { drainTimeoutMs: 0 });
    await waitFor(() => client.state === 'suspended');
    const view = await firstValueFrom(client.ensemble$);
    expect(view).toMatchObject({ hosts: [first.connectString], moves: 0, server: undefined });
  });
});

describe.runIf(transportName === 'typescript')('following through mapped addresses', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it('reaches every server where `address` says (a proxy each), the new ones too', async () => {
    const routes = new Map<string, string>();
    const route = async (server: { connectString: string }) => {
      const proxy = await proxyTo(server.connectString);
      routes.set(server.connectString, proxy.connectString);
      return proxy;
    };
    const proxies = await Promise.all(ensemble.servers.map(route));
    const log = logCollector();
    const client = await connectedClient({
      connect: proxies.map((proxy) => proxy.connectString).join(','),
      sessionTimeoutMs: 6_000,
      logger: log.logger,
      logLevel: 'debug',
      followEnsemble: {
        maxDelayMs: 50,
        address: ({ host, port }) => {
          const target = routes.get(`${host}:${port}`)?.split(':');
          return target && { host: target[0]!, port: Number(target[1]) };
        },
      },
    });
    const session = record(client.session$);
    const first = await follows(client, [...routes.values()]);
    const before = await memberOf(ensemble, client);
    // The new server is mapped only once the client has read the configuration that adds it
    // (and found no address for it there): its list never grows, so it cannot rebalance onto the
    // new server before the removal. One that did, if then dropped there (a hand-off, below),
    // could come back on any server, the one about to be removed included, and move twice: CI
    // saw 2 moves once (not reproduced in 40 runs of the file). The removal is read with the new
    // server mapped.
    const added = await ensemble.addServer();
    await firstValueFrom(
      client.ensemble$.pipe(filter((view) => view.configVersion !== first.configVersion)),
    );
    const addedProxy = await route(added);
    await ensemble.removeServer(before);
    const mapped = ensemble.connectString.split(',').map((address) => routes.get(address)!);
    await follows(client, mapped);
    // Off the removed server through a proxy of the new configuration: by its one planned move
    // (to the new server, by the Java client's rule, with one server out and one in) — or, when
    // the removed server was the leader, through the hand-off that drops every client at the
    // change (it may cut the move short: a log showed it), never suspended either way.
    const view = await firstValueFrom(
      client.ensemble$.pipe(
        filter((view) => view.server !== undefined && mapped.includes(view.server)),
      ),
    );
    expect(view.moves + view.handOffs, log.text()).toBeGreaterThanOrEqual(1);
    expect(view.moves, log.text()).toBeLessThanOrEqual(1);
    expect(await memberOf(ensemble, client), log.text()).not.toBe(before);
    expect(client.hosts).toContain(addedProxy.connectString);
    expect(client.hosts.every((host) => [...routes.values()].includes(host))).toBe(true);
    expect(statesOf(session), log.text()).toEqual(['connected']);
  });
});

describe.runIf(transportName === 'typescript')('a client that could not move off in time', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it('is not suspended when the server it could not leave stops, if it is back within the bound', async () => {
    const first = ensemble.servers[0]!;
    // The other servers are reached through proxies that refuse at first: its move finds none.
    const proxies = new Map<string, Awaited<ReturnType<typeof proxyTo>>>();
    for (const server of ensemble.servers.slice(1)) {
      const proxy = await proxyTo(server.connectString);
      proxy.refuse(true);
      proxies.set(server.connectString, proxy);
    }
    const client = await connectedClient({
      connect: first.connectString,
      sessionTimeoutMs: 6_000,
      followEnsemble: {
        maxDelayMs: 0,
        address: ({ host, port }) => {
          const proxy = proxies.get(`${host}:${port}`);
          return proxy ? { host: '127.0.0.1', port: proxy.port } : { host, port };
        },
      },
    });
    await follows(client, [
      first.connectString,
      ...[...proxies.values()].map((p) => p.connectString),
    ]);
    const session = record(client.session$);
    // Stopped 7 s after its removal: longer than a session timeout after the last change.
    await ensemble.removeServer(first.index, { drainTimeoutMs: 7_000 });
    for (const proxy of proxies.values()) proxy.refuse(false);
    // The server may list the session before the client has read its answer: wait for the
    // client's own word that it is back.
    const back = await firstValueFrom(client.ensemble$.pipe(filter((view) => view.handOffs > 0)));
    expect(back.handOffs).toBe(1);
    await waitFor(async () => (await ensemble.serverOf(client.sessionId!)) !== undefined, 15_000);
    expect(statesOf(session)).toEqual(['connected']);
  });
});

describe.runIf(transportName === 'typescript')('a rolling replacement of every server', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it('keeps the session, the chroot and the names, also for the session after an expiry', async () => {
    const original = ensemble.connectString;
    const admin = await connectedClient({ connect: original, followEnsemble: { maxDelayMs: 100 } });
    const root = await testRoot(() => ensemble.connectString);
    const looked: string[] = [];
    const client = await connectedClient({
      connect: `${original}${root}`,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 100 },
      lookup: (name) => {
        looked.push(name);
        return ['127.0.0.1'];
      },
    });
    const sessionId = client.sessionId!;
    const session = record(client.session$);
    // Servers 4, 5, 6 come in under a host name; 1, 2, 3 (the leader among them) go.
    for (const index of [0, 1, 2]) await ensemble.replaceServer(index, { host: 'localhost' });
    const hosts = ensemble.connectString.split(',');
    expect(hosts.every((host) => host.startsWith('localhost:'))).toBe(true);
    await follows(client, hosts);
    expect(client.hosts).toEqual(expect.arrayContaining(hosts));
    expect(looked).toContain('localhost');
    expect(client.sessionId).toBe(sessionId);
    expect(statesOf(session)).toEqual(['connected']);

    // A write lands under the chroot, as a client without one sees it.
    await client.promises.create('/written', 'during');
    await follows(admin, hosts);
    expect((await admin.promises.get(`${root}/written`)).data.toString()).toBe('during');

    // After an expiry the new session connects to the servers followed, chroot kept.
    await expireSession(client, { connectString: ensemble.connectString });
    await client.connected(15_000);
    expect(client.sessionId).not.toBe(sessionId);
    await client.promises.create('/after-expiry', 'new session');
    expect((await admin.promises.get(`${root}/after-expiry`)).data.toString()).toBe('new session');

    // A client made now with the original connect string finds none of its servers.
    const late = await openClient({ connect: original, connectTimeoutMs: 2_000 });
    expect((await rejectionOf(late.connected())).code).toBe('ConnectTimeout');
    expect(client.state).toBe('connected');
  });
});

describe.runIf(transportName === 'typescript')('a TLS client following the ensemble', () => {
  let ensemble: Ensemble;
  let certificates: TestCertificates;
  beforeAll(async () => {
    certificates = createTestCertificates();
    ensemble = await startEnsemble({
      size: 3,
      reconfig: true,
      tls: { ...certificates.server, portUnification: true },
    });
  });
  afterAll(() => ensemble?.close());

  it('follows client ports that take TLS, and moves over TLS, never suspended', async () => {
    const log = logCollector();
    const client = await connectedClient({
      connect: ensemble.connectString,
      tls: { ca: certificates.ca.certificate },
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 100 },
      logger: log.logger,
      logLevel: 'debug',
    });
    const sessionId = client.sessionId!;
    const session = record(client.session$);
    await follows(client, ensemble.connectString.split(','));
    const before = await memberOf(ensemble, client);
    const added = await ensemble.replaceServer(before);
    await follows(client, ensemble.connectString.split(','));
    expect(client.hosts).toContain(added.connectString);
    // Off its server by a planned move — or, if its TLS connections to the others took too long
    // on a loaded machine, when that server stopped, within the bound: never suspended either way.
    await firstValueFrom(client.ensemble$.pipe(filter((view) => view.moves + view.handOffs >= 1)));
    expect(await memberOf(ensemble, client), log.text()).not.toBe(before);
    expect(client.sessionId).toBe(sessionId);
    expect(statesOf(session), log.text()).toEqual(['connected']);
  });

  it('never takes the plaintext ports of a configuration that names no TLS port', async () => {
    const messages: string[] = [];
    const client = await connectedClient({
      connect: ensemble.secureConnectString!,
      tls: { ca: certificates.ca.certificate },
      followEnsemble: { maxDelayMs: 0 },
      logLevel: 'info',
      logger: { info: (message: string) => messages.push(message) },
    });
    const hosts = ensemble.secureConnectString!.split(',');
    await waitFor(() => messages.some((message) => message.includes('ZOOKEEPER-4276')));
    await ensemble.addServer();
    expect(client.hosts).toEqual(hosts);
    expect((await firstValueFrom(client.ensemble$)).configVersion).toBeUndefined();
    expect(client.state).toBe('connected');
  });
});

describe.runIf(transportName === 'native')('the native transport and a moving ensemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  // It once handed the servers followed to the C client (`zoo_set_servers`) while reconnecting:
  // the process aborted in 3 runs of 9. Now a session keeps its servers and says so.
  it('keeps its servers through a reconfiguration (no zoo_set_servers: it aborted the process), and says so', async () => {
    const first = ensemble.servers[0]!;
    const warned: string[] = [];
    const client = await connectedClient({
      connect: ensemble.connectString,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 0 },
      logLevel: 'warn',
      logger: { debug: () => {}, info: () => {}, warn: (message) => warned.push(message) },
    });
    const sessionId = client.sessionId!;
    await follows(client, ensemble.connectString.split(','));
    expect(
      warned.some((message) => message.includes('native transport cannot change servers')),
    ).toBe(true);
    const session = record(client.session$);
    // A server of its connect string goes (maybe its own): the session stays, on the others.
    await ensemble.removeServer(first.index, { drainTimeoutMs: 0 });
    await follows(
      client,
      ensemble.connectString.split(',').filter((host) => host !== first.connectString),
    );
    await client.promises.exists('/');
    expect(client.sessionId).toBe(sessionId);
    expect(statesOf(session).filter((state) => state === 'expired')).toEqual([]);
    expect((await firstValueFrom(client.ensemble$)).moves).toBe(0);
  });
});
