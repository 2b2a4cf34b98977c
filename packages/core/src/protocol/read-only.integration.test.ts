/**
 * Read-only servers (`canBeReadOnly`): a member cut off from its quorum serves reads in
 * read-only mode to the clients that accept it; writes fail with NotReadOnly, and a client that
 * does not accept it never connects there.
 */
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openClient,
  record,
  rejectionOf,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';

describe.runIf(transportName === 'typescript')('a read-only server', () => {
  let ensemble: Ensemble;

  beforeAll(async () => {
    // A read-only server makes sessions only as local sessions (else it answers createSession
    // with NotReadOnly).
    ensemble = await startEnsemble({
      size: 3,
      systemProperties: { 'readonlymode.enabled': 'true' },
      extraConfig: { localSessionsEnabled: 'true', localSessionsUpgradingEnabled: 'true' },
    });
  });

  afterAll(async () => {
    await ensemble?.close();
  });

  it('serves reads to a client that accepts it, and refuses its writes with NotReadOnly', async () => {
    const root = await testRoot(ensemble.connectString);
    const [alone, ...others] = ensemble.servers;
    const setup = await openClient({ connect: alone!.connectString });
    await setup.connected(10_000);
    await setup.promises.create(`${root}/kept`, 'before the split');
    await setup.promises.sync(root);
    await setup.close();
    // The member left alone loses its quorum and turns read-only.
    for (const member of others) await ensemble.stopServer(member.index);
    await waitFor(
      async () => (await alone!.fourLetterWord('isro').catch(() => '')).trim() === 'ro',
      30_000,
    );

    const readOnly = await openClient({ connect: alone!.connectString, canBeReadOnly: true });
    await readOnly.connected(20_000);
    expect(readOnly.readOnly).toBe(true);
    expect(readOnly.state).toBe('read-only');
    expect((await readOnly.promises.get(`${root}/kept`)).data.toString()).toBe('before the split');
    const refused = await rejectionOf(readOnly.promises.create(`${root}/new`, 'x'));
    expect(refused.code).toBe('NotReadOnly');

    const strict = await openClient({ connect: alone!.connectString, connectTimeoutMs: 2_000 });
    expect((await rejectionOf(strict.connected())).code).toBe('ConnectTimeout');

    await readOnly.close();
    for (const member of others) await ensemble.startServer(member.index);
  });

  it('finds its way back to a read-write server, on a session of its own (a read-only one is local)', async () => {
    const root = await testRoot(ensemble.connectString);
    const [first, second, alone] = ensemble.servers;
    // One member is partitioned from its quorum (clients still reach it): it serves read-only.
    await ensemble.isolateServer(alone!.index);
    // The others go down: the client can only reach the read-only one.
    await Promise.all([ensemble.stopServer(first!.index), ensemble.stopServer(second!.index)]);
    const client = await openClient({ connect: ensemble.connectString, canBeReadOnly: true });
    const session = record(client.session$);
    await client.connected(30_000);
    expect(client.readOnly).toBe(true);
    // Calls reach it (reads), but it confirms nothing of a session on the quorum: `read-only`,
    // not `connected` (Java's ConnectedReadOnly).
    expect(client.state).toBe('read-only');
    const readOnlyId = client.sessionId;
    // The quorum is back without the partitioned member, which stays read-only: the client
    // must look for a read-write server itself.
    await Promise.all([ensemble.startServer(first!.index), ensemble.startServer(second!.index)]);
    await waitFor(() => client.state === 'connected' && !client.readOnly, 60_000);
    expect((await alone!.fourLetterWord('isro')).trim()).toBe('ro');
    // A new session, asked for as such (a read-only session id means nothing elsewhere): no
    // detour through "expired".
    expect(client.sessionId).not.toBe(readOnlyId);
    expect(statesOf(session)).toEqual(['connecting', 'read-only', 'suspended', 'connected']);
    const made = await client.promises.create(`${root}/written`, 'x', { mode: 'ephemeral' });
    expect(made.stat.ephemeralOwner).toBe(client.sessionId);
    await client.close();
    await ensemble.stopServer(alone!.index);
    await ensemble.startServer(alone!.index);
  });
});
