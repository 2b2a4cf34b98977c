/**
 * SASL DIGEST-MD5 against a real ZooKeeper with a JAAS login: the session logs in on every
 * connection before any request and passes `sasl:` ACLs; a wrong password ends in auth-failed.
 */
import { startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectedClient,
  openClient,
  proxyTo,
  record,
  rejectionOf,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { createClient, Permission, ZkError } from '../index';
import { nativeTransport } from '../native/index';

describe.runIf(transportName === 'typescript')('SASL DIGEST-MD5', () => {
  let server: ZooKeeperServer;

  beforeAll(async () => {
    server = await startZooKeeper({ sasl: { users: { alice: 'wonderland' } } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('logs in on every connection and passes sasl ACLs; a session without the login does not', async () => {
    const proxy = await proxyTo(server.connectString);
    const alice = await connectedClient({
      connect: proxy.connectString,
      sasl: { mechanism: 'DIGEST-MD5', username: 'alice', password: 'wonderland' },
    });
    const stranger = await connectedClient({ connect: server.connectString });
    const root = await testRoot(server.connectString);
    const path = `${root}/alice-only`;
    await alice.promises.create(path, 'hers', {
      acl: [{ permissions: Permission.All, scheme: 'sasl', id: 'alice' }],
    });
    expect((await alice.promises.get(path)).data.toString()).toBe('hers');
    expect((await rejectionOf(stranger.promises.get(path))).code).toBe('NoAuth');
    // A new connection logs in again before anything else goes out.
    const session = record(alice.session$);
    proxy.cut();
    await waitFor(() => alice.state === 'reconnected');
    expect(statesOf(session)).toEqual(['connected', 'suspended', 'reconnected']);
    expect((await alice.promises.get(path)).data.toString()).toBe('hers');
    await alice.promises.delete(path);
  });

  it('ends in auth-failed with a wrong password', async () => {
    const client = await openClient({
      connect: server.connectString,
      sasl: { username: 'alice', password: 'looking-glass' },
    });
    const session = record(client.session$);
    const error = await rejectionOf(client.connected(10_000));
    expect(['AuthFailed', 'ClientClosed']).toContain(error.code);
    await waitFor(() => session.completed);
    expect(statesOf(session)).toEqual(['connecting', 'auth-failed']);
  });
});

describe.runIf(transportName === 'native')('SASL on the native transport', () => {
  it('is refused when the client is created, naming the default transport', () => {
    let error: unknown;
    try {
      createClient({
        connect: '127.0.0.1:1',
        sasl: { username: 'alice', password: 'x' },
        transport: nativeTransport(),
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ZkError);
    expect((error as ZkError).message).toContain('default (TypeScript) transport');
  });
});
