/**
 * Throwaway certificates for TLS tests: a CA, a server certificate for the loopback address and
 * `localhost`, and a client certificate, made with the `openssl` command line (EC P-256, PEM).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOptions, rule } from './options';

/** A certificate and its private key, PEM. */
export interface CertificateAndKey {
  readonly certificate: string;
  readonly privateKey: string;
}

/** What {@link createTestCertificates} makes. */
export interface TestCertificates {
  /** The CA that signed the others: trust it (`ca` of `tls.connect`, the server's trust store). */
  readonly ca: CertificateAndKey;
  /** For the server: valid for 127.0.0.1, ::1 and localhost. */
  readonly server: CertificateAndKey;
  /** For a client authenticating with a certificate (`ssl.clientAuth=need`). */
  readonly client: CertificateAndKey;
}

/** Options of {@link createTestCertificates}; a wrong one throws `InvalidOptionError`. */
export interface TestCertificatesOptions {
  /** Names and addresses the server certificate is valid for; loopback and localhost by default. */
  readonly serverNames?: readonly string[];
  /** Days of validity; 2 by default. */
  readonly days?: number;
  /** The `openssl` to run; `openssl` on PATH by default. */
  readonly openssl?: string;
}

const defaultNames = ['IP:127.0.0.1', 'IP:::1', 'DNS:localhost'];

/**
 * Makes a CA and a server and a client certificate signed by it, in a temporary directory it
 * removes again. Needs `openssl` (1.1.1 or 3).
 *
 * ## Example
 *
 * ```ts
 * const certificates = createTestCertificates();
 * const server = await startZooKeeper({ tls: certificates.server });
 * const client = createClient({ connect: server.secureConnectString!, tls: { ca: certificates.ca.certificate } });
 * ```
 *
 * @param options Server names, validity, the openssl binary.
 * @return The three certificates and keys, PEM.
 */
export function createTestCertificates(options: TestCertificatesOptions = {}): TestCertificates {
  checkOptions('createTestCertificates', options, {
    serverNames: rule.strings,
    days: rule.positiveInteger,
    openssl: rule.string,
  });
  const openssl = options.openssl ?? 'openssl';
  const days = String(options.days ?? 2);
  const names = (options.serverNames ?? defaultNames).map((name) =>
    /^(IP|DNS):/.test(name) ? name : /^[\d.:]+$/.test(name) ? `IP:${name}` : `DNS:${name}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'zkrx-certs-'));
  const run = (...args: string[]) =>
    execFileSync(openssl, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const key = (name: string) =>
    run(
      'genpkey',
      '-algorithm',
      'EC',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-out',
      `${name}.key`,
    );
  try {
    key('ca');
    run(
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      days,
      '-subj',
      '/CN=zkrx test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    const issue = (name: string, subject: string, extensions: string) => {
      key(name);
      run('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
      writeFileSync(join(dir, `${name}.ext`), extensions);
      run(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        days,
        '-extfile',
        `${name}.ext`,
      );
    };
    issue(
      'server',
      '/CN=localhost',
      `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${names.join(',')}\n`,
    );
    issue(
      'client',
      '/CN=zkrx-test-client',
      'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n',
    );
    const read = (name: string): CertificateAndKey => ({
      certificate: readFileSync(join(dir, `${name}.pem`), 'utf8'),
      privateKey: readFileSync(join(dir, `${name}.key`), 'utf8'),
    });
    return { ca: read('ca'), server: read('server'), client: read('client') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
