/**
 * A test server with a TLS port (Netty, PEM stores) and certificates made for the test: the TLS
 * port answers a handshake with the server certificate, the plain port keeps working.
 */
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCertificates, type TestCertificates } from './certificates';
import { fourLetterWord } from './four-letter-words';
import { startZooKeeper, type ZooKeeperServer } from './server';

describe('startZooKeeper({ tls })', () => {
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

  it('serves TLS on its secure port with the given certificate, and plain TCP as before', async () => {
    expect(server.secureConnectString).toBe(`127.0.0.1:${server.securePort}`);
    const peer = await new Promise<string>((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port: server.securePort!,
        ca: certificates.ca.certificate,
        cert: certificates.client.certificate,
        key: certificates.client.privateKey,
      });
      socket.once('secureConnect', () => {
        resolve(String(socket.getPeerCertificate().subject.CN));
        socket.destroy();
      });
      socket.once('error', reject);
    });
    expect(peer).toBe('localhost');
    expect(await fourLetterWord(server.connectString, 'ruok')).toBe('imok');
  });

  it('makes certificates a TLS client can verify', () => {
    expect(certificates.ca.certificate).toContain('BEGIN CERTIFICATE');
    expect(certificates.server.privateKey).toContain('PRIVATE KEY');
    expect(certificates.client.certificate).not.toBe(certificates.server.certificate);
  });
});
