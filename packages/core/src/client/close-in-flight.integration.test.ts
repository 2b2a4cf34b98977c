/**
 * `close()` while requests are in flight: the server answers them before it closes the session,
 * so their promises settle with the server's answers — a write the server applied resolves, and
 * nothing reports a failure the server did not have. Calls never sent fail `ClientClosed`.
 */
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  openClient,
  partition,
  proxyTo,
  rejectionOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';

describe('close() with requests in flight', () => {
  it('a set sent just before close() resolves, as the server applied it (10 rounds)', async () => {
    const root = await testRoot();
    const observer = await connectedClient();
    await observer.promises.create(`${root}/value`, '0');
    for (let round = 1; round <= 10; round++) {
      const client = await connectedClient();
      const set = client.promises.set(`${root}/value`, String(round));
      const read = client.promises.get(`${root}/value`);
      await client.close();
      expect((await set).version).toBe(round);
      expect((await read).data.toString()).toBe(String(round));
      expect((await observer.promises.get(`${root}/value`)).data.toString()).toBe(String(round));
    }
  });

  it('closing aborts as close() is called: work tracked then is waited for, connected', async () => {
    const root = await testRoot();
    const client = await connectedClient();
    let stateWhenTold: string | undefined;
    let written: Promise<unknown> | undefined;
    client.closing.addEventListener('abort', () => {
      stateWhenTold = client.state;
      written = client.promises.create(`${root}/last-word`, 'bye');
      client.track(written);
    });
    expect(client.closing.aborted).toBe(false);
    const closing = client.close();
    expect(client.closing.aborted).toBe(true);
    expect(stateWhenTold).toBe('connected');
    await closing;
    await expect(written).resolves.toMatchObject({ path: `${root}/last-word` });
  });

  it('a call waiting for a connection fails ClientClosed: it never reached the server', async () => {
    const proxy = await proxyTo();
    const root = await testRoot();
    const client = await connectedClient({ connect: proxy.connectString });
    await partition(proxy, client);
    const write = rejectionOf(client.promises.create(`${root}/never`, 'x'));
    await client.close();
    const error = await write;
    expect(error.code).toBe('ClientClosed');
    const observer = await connectedClient();
    expect(await observer.promises.exists(`${root}/never`)).toBeNull();
  });

  // The C client fails every pending call with ZCLOSING when it closes.
  it.runIf(transportName === 'typescript')(
    'a call whose reply the server never sends says it may have been applied',
    async () => {
      const proxy = await proxyTo();
      const root = await testRoot();
      const client = await openClient({ connect: proxy.connectString });
      await client.connected();
      proxy.holdReplies(true);
      const write = rejectionOf(client.promises.create(`${root}/maybe`, 'x'));
      await waitFor(() => proxy.heldReplyBytes > 0);
      await client.close();
      const error = await write;
      expect(error.code).toBe('ClientClosed');
      expect(error.message).toContain('may have been applied');
      proxy.holdReplies(false);
    },
  );
});
