/**
 * TLS against a real ZooKeeper's `secureClientPort` (Netty), with certificates made for the
 * test: a client that trusts the CA connects and reconnects; one that does not never connects;
 * a client certificate authenticates the session (x509 ACLs). The native transport has no TLS.
 */
import {
  createTestCertificates,
  startZooKeeper,
  type TestCertificates,
  type ZooKeeperServer,
} from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectedClient,
  openClient,
  proxyTo,
  record,
  rejectionOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { createClient, Permission, ZkError } from '../index';
import { nativeTransport } from '../native/index';

describe.runIf(transportName === 'typescript')('TLS', () => {
  let certificates: TestCertificates;
  let server: ZooKeeperServer;

  beforeAll(async () => {
    certificates = createTestCertificates();
    server = await startZooKeeper({
      tls: { ...certificates.server, ca: certificates.ca.certificate, clientAuth: 'want' },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('connects to the secure port trusting the CA, and every call works over it', async () => {
    const client = await connectedClient({
      connect: server.secureConnectString!,
      tls: { ca: certificates.ca.certificate },
    });
    const root = await testRoot(server.connectString);
    const created = await client.promises.create(`${root}/over-tls`, 'secret', {
      mode: 'ephemeral',
    });
    expect(created.stat.ephemeralOwner).toBe(client.sessionId);
    expect((await client.promises.get(created.path)).data.toString()).toBe('secret');
    const tree = record(client.watchTree(root));
    await waitFor(() => tree.values.length === 1);
    await client.promises.set(created.path, 'changed');
    await waitFor(() => tree.values.length === 2);
    expect(tree.values[1]).toEqual({ type: 'changed', path: created.path });
  });

  it('reconnects over TLS on the same session after the connection drops', async () => {
    const proxy = await proxyTo(server.secureConnectString);
    const client = await connectedClient({
      connect: proxy.connectString, // 127.0.0.1 too: the certificate's name
      tls: { ca: certificates.ca.certificate },
    });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    proxy.cut();
    await waitFor(() => client.state === 'reconnected');
    expect(session.values.map((event) => event.state)).toEqual([
      'connected',
      'suspended',
      'reconnected',
    ]);
    expect(client.sessionId).toBe(sessionId);
    expect(await client.promises.exists('/')).not.toBeNull();
  });

  it('never connects to a server it cannot verify, and says why in the log', async () => {
    const warnings: string[] = [];
    const client = await openClient({
      connect: server.secureConnectString!,
      tls: true, // the system's CAs: the test CA is not among them
      connectTimeoutMs: 1_500,
      logger: { warn: (message) => warnings.push(message) },
    });
    expect((await rejectionOf(client.connected())).code).toBe('ConnectTimeout');
    expect(warnings.some((line) => /certificate/i.test(line))).toBe(true);
    // Plain TCP to the TLS port does not connect either.
    const plain = await openClient({
      connect: server.secureConnectString!,
      connectTimeoutMs: 1_500,
    });
    expect((await rejectionOf(plain.connected())).code).toBe('ConnectTimeout');
  });

  it('authenticates the session with a client certificate (x509 ACLs)', async () => {
    const withCertificate = await connectedClient({
      connect: server.secureConnectString!,
      tls: {
        ca: certificates.ca.certificate,
        cert: certificates.client.certificate,
        key: certificates.client.privateKey,
      },
    });
    const withoutCertificate = await connectedClient({
      connect: server.secureConnectString!,
      tls: { ca: certificates.ca.certificate },
    });
    const root = await testRoot(server.connectString);
    const path = `${root}/x509-only`;
    await withCertificate.promises.create(path, 'for the certificate', {
      acl: [{ permissions: Permission.All, scheme: 'x509', id: 'CN=zkrx-test-client' }],
    });
    expect((await withCertificate.promises.get(path)).data.toString()).toBe('for the certificate');
    expect((await rejectionOf(withoutCertificate.promises.get(path))).code).toBe('NoAuth');
    // Leave nothing the cleanup (another session) could not delete.
    await withCertificate.promises.delete(path);
  });
});

describe.runIf(transportName === 'native')('TLS on the native transport', () => {
  it('is refused when the client is created, naming the default transport', () => {
    let error: unknown;
    try {
      createClient({ connect: '127.0.0.1:1', tls: true, transport: nativeTransport() });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ZkError);
    expect((error as ZkError).code).toBe('BadArguments');
    expect((error as ZkError).message).toContain('default (TypeScript) transport');
  });
});
