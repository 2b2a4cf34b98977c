/**
 * Following the ensemble's dynamic configuration against a real reconfigurable ensemble: the
 * servers followed, moves without a suspension when a server leaves, names kept as names, the
 * chroot kept after an expiry, one configuration watch at most and none after close,
 * `followEnsemble: false`.
 */
import { type Ensemble, expireSession, startEnsemble } from '@zkrx/testing';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZkClient } from './client';
import type { EnsembleView } from './ensemble-follower';
import {
  connectedClient,
  record,
  statesOf,
  testRoot,
  transportName,
  waitFor,
  watchedPaths,
} from '../test/support';

/** Resolves once the client follows exactly `hosts` (order aside). */
function follows(client: ZkClient, hosts: readonly string[]): Promise<EnsembleView> {
  const wanted = [...hosts].sort().join(',');
  return firstValueFrom(
    client.ensemble$.pipe(filter((view) => [...view.hosts].sort().join(',') === wanted)),
  );
}

/** The index of the ensemble member `client`'s session is on (once one lists it). */
async function memberOf(ensemble: Ensemble, client: ZkClient): Promise<number> {
  let index: number | undefined;
  await waitFor(async () => {
    index = await ensemble.serverOf(client.sessionId!);
    return index !== undefined;
  });
  return index!;
}

/** Resolves once the client has moved by itself `count` times. */
function moved(client: ZkClient, count = 1): Promise<EnsembleView> {
  return firstValueFrom(client.ensemble$.pipe(filter((view) => view.moves >= count)));
}

describe.runIf(transportName === 'typescript')('following a reconfigurable ensemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  it('follows the configuration and moves off a removed server before it stops, never suspended', async () => {
    const client = await connectedClient({
      connect: ensemble.connectString,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 100 },
            ...(process.env.DEBUG_ENS ? { logger: console, logLevel: 'info' as const } : {}),
    });
    const root = await testRoot(ensemble.connectString);
    const sessionId = client.sessionId!;
    const node = await client.promises.create(`${root}/alive`, '', { mode: 'ephemeral' });
    const session = record(client.session$);
    const followed = await follows(client, ensemble.connectString.split(','));
    expect(followed.configVersion).toMatch(/^[0-9a-f]+$/);
    expect(client.hosts).toEqual(followed.hosts);

    await ensemble.addServer();
    await follows(client, ensemble.connectString.split(','));
    const before = await memberOf(ensemble, client);
    // Removing its server waits for the client to leave it, then stops the server.
    await ensemble.removeServer(before);
    expect(ensemble.servers[before]!.running).toBe(false);
    const view = await moved(client);
    const after = await memberOf(ensemble, client);
    expect(after).not.toBe(before);
    expect(view.server).toBe(ensemble.servers[after]!.connectString);
    expect(client.sessionId).toBe(sessionId);
    expect(statesOf(session)).toEqual(['connected']);
    expect((await client.promises.exists(node.path))?.ephemeralOwner).toBe(sessionId);
  });

  it("rides out the leader's removal, which drops every server's clients for a moment", async () => {
    const clients = await Promise.all(
      ensemble.servers
        .filter((server) => server.inConfiguration)
        .map((server) =>
          connectedClient({
            connect: server.connectString,
            sessionTimeoutMs: 6_000,
            followEnsemble: { maxDelayMs: 100 },
            ...(process.env.DEBUG_ENS ? { logger: console, logLevel: 'info' as const } : {}),
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
      expect(statesOf(sessions[index]!)).toEqual(['connected']);
    }
  });
});
