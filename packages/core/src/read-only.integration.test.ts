/**
 * Read-only servers (`canBeReadOnly`): a member cut off from its quorum serves reads in
 * read-only mode to the clients that accept it; writes fail with NotReadOnly, and a client that
 * does not accept it never connects there.
 */
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClient, rejectionOf, testRoot, transportName, waitFor } from '../test/support';

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
    expect((await readOnly.promises.get(`${root}/kept`)).data.toString()).toBe('before the split');
    const refused = await rejectionOf(readOnly.promises.create(`${root}/new`, 'x'));
    expect(refused.code).toBe('NotReadOnly');

    const strict = await openClient({ connect: alone!.connectString, connectTimeoutMs: 2_000 });
    expect((await rejectionOf(strict.connected())).code).toBe('ConnectTimeout');

    await readOnly.close();
    for (const member of others) await ensemble.startServer(member.index);
  });
});
