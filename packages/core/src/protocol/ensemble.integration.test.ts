/**
 * Failover in a real three-server ensemble: the server a client is attached to goes down, the
 * session moves to another one with its ephemeral nodes and watches.
 */
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectedClient, record, testRoot, waitFor } from '../../test/support';

/** The index of the member `sessionId` is connected to, from each member's `cons`. */
async function attachedIndex(ensemble: Ensemble, sessionId: string): Promise<number> {
  const marker = `sid=0x${sessionId}`;
  for (const server of ensemble.servers) {
    if (!server.running) continue;
    if ((await server.fourLetterWord('cons')).includes(marker)) return server.index;
  }
  return -1;
}

describe('in a three-server ensemble', () => {
  let ensemble: Ensemble;

  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3 });
  });

  afterAll(async () => {
    await ensemble?.close();
  });

  it('keeps the session, its ephemeral node and its watch when its server goes down', async () => {
    const client = await connectedClient({
      connect: ensemble.connectString,
      sessionTimeoutMs: 8_000,
    });
    const root = await testRoot(ensemble.connectString);
    const sessionId = client.sessionId!;
    const ephemeral = await client.promises.create(`${root}/member`, 'alive', {
      mode: 'ephemeral',
    });
    const watchedPath = `${root}/config`;
    await client.promises.create(watchedPath, 'v1');
    const stream = record(client.watchData(watchedPath));
    await waitFor(() => stream.values.length === 1);

    const before = await attachedIndex(ensemble, sessionId);
    expect(before).toBeGreaterThanOrEqual(0);
    const session = record(client.session$);
    // The member stays down until the ensemble closes: starting a JVM while clients are
    // connected would make it inherit their sockets (the C client does not set FD_CLOEXEC),
    // leaving stale epoll registrations behind once those sockets close.
    await ensemble.stopServer(before);
    await waitFor(() => client.state === 'reconnected', 15_000);
    expect(session.values).toEqual([
      { state: 'connected', sessionId },
      { state: 'suspended', sessionId },
      { state: 'reconnected', sessionId },
    ]);
    const after = await attachedIndex(ensemble, sessionId);
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).not.toBe(before);

    // The ephemeral node is still ours, as any other client sees it.
    const survivors = ensemble.servers
      .filter((server) => server.running)
      .map((server) => server.connectString)
      .join(',');
    const other = await connectedClient({ connect: survivors });
    expect((await other.promises.exists(ephemeral.path))?.ephemeralOwner).toBe(sessionId);
    expect((await client.promises.get(ephemeral.path)).data.toString()).toBe('alive');

    // The watch set before the failover still reports changes after it.
    await other.promises.set(watchedPath, 'v2');
    await waitFor(() => stream.values.length === 2);
    expect(stream.values[1]?.data.toString()).toBe('v2');
    expect(stream.error).toBeUndefined();
    expect(client.sessionId).toBe(sessionId);
  });
});
