/**
 * Every option check of @zkrx/testing: a wrong type or value, a missing field of an object
 * option, or an unknown key throws InvalidOptionError naming the function, the option and what
 * it expects — before anything starts: no JVM launched, no temporary directory, no socket.
 */
import { mkdtempSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestCertificates } from './certificates';
import { startEnsemble } from './ensemble';
import { InvalidOptionError } from './errors';
import { expireSession } from './expire-session';
import { locateZooKeeper } from './locate';
import { startProxy } from './proxy';
import { startRawSession } from './raw-session';
import { startZooKeeper } from './server';
import { launchServer } from './server-process';

// Spies on everything that starts something: a JVM, a temporary directory, a socket.
vi.mock('./server-process', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./server-process')>();
  return { ...actual, launchServer: vi.fn(actual.launchServer) };
});
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, mkdtempSync: vi.fn(actual.mkdtempSync) };
});
vi.mock('node:net', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:net')>();
  return {
    ...actual,
    connect: vi.fn(actual.connect),
    createServer: vi.fn(actual.createServer),
  };
});

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const tls = { certificate: PEM, privateKey: KEY };
const credentials = { connectString: '127.0.0.1:1', sessionId: '1', password: 'a'.repeat(32) };

/** The error `run` throws or rejects with. */
async function errorOf(run: () => unknown): Promise<InvalidOptionError> {
  try {
    await run();
  } catch (error) {
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    return error as InvalidOptionError;
  }
  throw new Error('expected an InvalidOptionError, nothing was thrown');
}

type Row = [
  label: string,
  run: () => unknown,
  functionName: string,
  option: string,
  expected: string | RegExp,
  received: string,
];

// biome-ignore format: one check a line
const wrongValues: Row[] = [
  ['tls: true (#tls)', () => startZooKeeper({ tls: true as never }), 'startZooKeeper', 'tls', 'an object { certificate, privateKey, ca?, clientAuth? }', 'true'],
  ['port: a string', () => startZooKeeper({ port: '2181' as never }), 'startZooKeeper', 'port', 'an integer port from 1 to 65535', '"2181"'],
  ['port: 0', () => startZooKeeper({ port: 0 }), 'startZooKeeper', 'port', 'an integer port from 1 to 65535', '0'],
  ['tickTime: 0', () => startZooKeeper({ tickTime: 0 }), 'startZooKeeper', 'tickTime', 'a positive integer', '0'],
  ['minSessionTimeoutMs: 1.5', () => startZooKeeper({ minSessionTimeoutMs: 1.5 }), 'startZooKeeper', 'minSessionTimeoutMs', 'a positive integer', '1.5'],
  ['maxSessionTimeoutMs: NaN', () => startZooKeeper({ maxSessionTimeoutMs: Number.NaN }), 'startZooKeeper', 'maxSessionTimeoutMs', 'a positive integer', 'NaN'],
  ['min above max', () => startZooKeeper({ minSessionTimeoutMs: 6000, maxSessionTimeoutMs: 4000 }), 'startZooKeeper', 'minSessionTimeoutMs', 'at most maxSessionTimeoutMs (4000)', '6000'],
  ['tmpfs: "yes"', () => startZooKeeper({ tmpfs: 'yes' as never }), 'startZooKeeper', 'tmpfs', 'true or false', '"yes"'],
  ['jvmOptions: a string', () => startZooKeeper({ jvmOptions: '-Xmx1g' as never }), 'startZooKeeper', 'jvmOptions', 'an array of strings', '"-Xmx1g"'],
  ['systemProperties: a number value', () => startZooKeeper({ systemProperties: { a: 1 } as never }), 'startZooKeeper', 'systemProperties', 'an object of string values', 'an object'],
  ['containerCheckIntervalMs: -1', () => startZooKeeper({ containerCheckIntervalMs: -1 }), 'startZooKeeper', 'containerCheckIntervalMs', 'a positive integer', '-1'],
  ['startTimeoutMs: Infinity', () => startZooKeeper({ startTimeoutMs: Number.POSITIVE_INFINITY }), 'startZooKeeper', 'startTimeoutMs', 'a positive number (ms)', 'Infinity'],
  ['extraConfig: an array', () => startZooKeeper({ extraConfig: [] as never }), 'startZooKeeper', 'extraConfig', 'an object of string values', 'an array'],
  ['logLevel: "verbose"', () => startZooKeeper({ logLevel: 'verbose' as never }), 'startZooKeeper', 'logLevel', "one of 'error', 'warn', 'info', 'debug'", '"verbose"'],
  ['zookeeperHome: ""', () => startZooKeeper({ zookeeperHome: '' }), 'startZooKeeper', 'zookeeperHome', 'a non-empty string', '""'],
  ['tls.certificate: not PEM', () => startZooKeeper({ tls: { ...tls, certificate: 'cert.pem' } }), 'startZooKeeper', 'tls.certificate', 'a PEM certificate', '"cert.pem"'],
  ['tls.privateKey: missing', () => startZooKeeper({ tls: { certificate: PEM } as never }), 'startZooKeeper', 'tls.privateKey', 'a PEM private key', 'nothing'],
  ['tls.ca: a Buffer', () => startZooKeeper({ tls: { ...tls, ca: Buffer.from(PEM) as never } }), 'startZooKeeper', 'tls.ca', 'a PEM certificate', 'a Uint8Array'],
  ['tls.clientAuth: true', () => startZooKeeper({ tls: { ...tls, clientAuth: true as never } }), 'startZooKeeper', 'tls.clientAuth', "one of 'none', 'want', 'need'", 'true'],
  ['tls.clientAuth need without ca', () => startZooKeeper({ tls: { ...tls, clientAuth: 'need' } }), 'startZooKeeper', 'tls.ca', "the CA certificate client certificates must chain to (tls.clientAuth is 'need')", 'undefined'],
  ['sasl: a string', () => startZooKeeper({ sasl: 'alice:wonderland' as never }), 'startZooKeeper', 'sasl', 'an object { users: { name: password } }', '"alice:wonderland"'],
  ['sasl.users: missing', () => startZooKeeper({ sasl: {} as never }), 'startZooKeeper', 'sasl.users', 'an object of user names to passwords', 'nothing'],
  ['sasl.users: a number password', () => startZooKeeper({ sasl: { users: { alice: 1 } } as never }), 'startZooKeeper', 'sasl.users', 'an object of user names to passwords', 'an object'],
  ['sasl.users: a bad name', () => startZooKeeper({ sasl: { users: { 'a b': 'x' } } }), 'startZooKeeper', 'sasl.users', 'user names of [A-Za-z0-9_.-] only', '"a b"'],
  ['sasl.users: a quote in a password', () => startZooKeeper({ sasl: { users: { alice: 'a"b' } } }), 'startZooKeeper', 'sasl.users.alice', 'a password without a quote', '"a\\"b"'],
  ['options: a number', () => startZooKeeper(2181 as never), 'startZooKeeper', 'options', 'an object (or nothing)', '2181'],
  ['ensemble size: 0', () => startEnsemble({ size: 0 }), 'startEnsemble', 'size', 'a positive integer', '0'],
  ['ensemble size: "3"', () => startEnsemble({ size: '3' as never }), 'startEnsemble', 'size', 'a positive integer', '"3"'],
  ['ensemble tickTime: a string', () => startEnsemble({ tickTime: '500' as never }), 'startEnsemble', 'tickTime', 'a positive integer', '"500"'],
  ['ensemble min above max', () => startEnsemble({ minSessionTimeoutMs: 9, maxSessionTimeoutMs: 8 }), 'startEnsemble', 'minSessionTimeoutMs', 'at most maxSessionTimeoutMs (8)', '9'],
  ['proxy port: 70000', () => startProxy('127.0.0.1:1', { port: 70_000 }), 'startProxy', 'port', 'an integer port from 0 to 65535', '70000'],
  ['proxy host: 127', () => startProxy('127.0.0.1:1', { host: 127 as never }), 'startProxy', 'host', 'a non-empty string', '127'],
  ['expireSession connectString: an array', () => expireSession(credentials, { connectString: ['a'] as never }), 'expireSession', 'connectString', 'a non-empty string', 'an array'],
  ['expireSession timeoutMs: 0', () => expireSession(credentials, { timeoutMs: 0 }), 'expireSession', 'timeoutMs', 'a positive number (ms)', '0'],
  ['rawSession sessionId: a number', () => startRawSession('127.0.0.1:1', { sessionId: 42 as never }), 'startRawSession', 'sessionId', 'a session id (hex string, or bigint)', '42'],
  ['rawSession password: too short', () => startRawSession('127.0.0.1:1', { password: 'abc' }), 'startRawSession', 'password', 'a password (32 hex characters, or 16 bytes)', '"abc"'],
  ['rawSession sessionTimeoutMs: "4s"', () => startRawSession('127.0.0.1:1', { sessionTimeoutMs: '4s' as never }), 'startRawSession', 'sessionTimeoutMs', 'a positive integer', '"4s"'],
  ['rawSession keepAlive: 1', () => startRawSession('127.0.0.1:1', { keepAlive: 1 as never }), 'startRawSession', 'keepAlive', 'true or false', '1'],
  ['rawSession connectTimeoutMs: -5', () => startRawSession('127.0.0.1:1', { connectTimeoutMs: -5 }), 'startRawSession', 'connectTimeoutMs', 'a positive number (ms)', '-5'],
  ['certificates serverNames: a string', () => createTestCertificates({ serverNames: 'localhost' as never }), 'createTestCertificates', 'serverNames', 'an array of strings', '"localhost"'],
  ['certificates days: 0.5', () => createTestCertificates({ days: 0.5 }), 'createTestCertificates', 'days', 'a positive integer', '0.5'],
  ['certificates openssl: null', () => createTestCertificates({ openssl: null as never }), 'createTestCertificates', 'openssl', 'a non-empty string', 'null'],
  ['locate zookeeperHome: 3', () => locateZooKeeper({ zookeeperHome: 3 as never }), 'locateZooKeeper', 'zookeeperHome', 'a non-empty string', '3'],
  ['locate env: a string', () => locateZooKeeper({ env: 'PATH=/bin' as never }), 'locateZooKeeper', 'env', 'an object of environment variables', '"PATH=/bin"'],
  ['locate debianJavaDir: true', () => locateZooKeeper({ debianJavaDir: true as never }), 'locateZooKeeper', 'debianJavaDir', 'a non-empty string', 'true'],
];

// biome-ignore format: one check a line
const unknownKeys: Row[] = [
  ['a typo of tls', () => startZooKeeper({ tsl: tls } as never), 'startZooKeeper', 'tsl', /^did you mean tls\? it takes port, tickTime, .*, tls, sasl$/, 'an object'],
  ['a field of tls', () => startZooKeeper({ tls: { ...tls, key: 'k' } as never }), 'startZooKeeper', 'tls.key', /^tls takes certificate, privateKey, ca, clientAuth$/, '"k"'],
  ['a field of sasl', () => startZooKeeper({ sasl: { users: {}, mechanism: 'PLAIN' } as never }), 'startZooKeeper', 'sasl.mechanism', /^sasl takes users$/, '"PLAIN"'],
  ['port for an ensemble', () => startEnsemble({ port: 2181 } as never), 'startEnsemble', 'port', /^did you mean host\? it takes tickTime, .*, size, host, reconfig, tls$/, '2181'],
  ['a typo of reconfig for an ensemble', () => startEnsemble({ reconfg: true } as never), 'startEnsemble', 'reconfg', /^did you mean reconfig\? it takes /, 'true'],
  ['a field of an ensemble\'s tls', () => startEnsemble({ tls: { ...tls, key: 'k' } } as never), 'startEnsemble', 'tls.key', /^tls takes /, '"k"'],
  ['sasl for an ensemble', () => startEnsemble({ sasl: { users: {} } } as never), 'startEnsemble', 'sasl', /^it takes /, 'an object'],
  ['a typo for the proxy', () => startProxy('127.0.0.1:1', { prot: 1 } as never), 'startProxy', 'prot', /^did you mean port\? it takes port, host$/, '1'],
  ['for expireSession', () => expireSession(credentials, { timeout: 5 } as never), 'expireSession', 'timeout', /^did you mean timeoutMs\? it takes connectString, timeoutMs$/, '5'],
  ['for startRawSession', () => startRawSession('127.0.0.1:1', { keepalive: true } as never), 'startRawSession', 'keepalive', /^did you mean keepAlive\? /, 'true'],
  ['for createTestCertificates', () => createTestCertificates({ names: [] } as never), 'createTestCertificates', 'names', /^it takes serverNames, days, openssl$/, 'an array'],
  ['for locateZooKeeper', () => locateZooKeeper({ home: '/opt/zk' } as never), 'locateZooKeeper', 'home', /^it takes zookeeperHome, env, debianJavaDir$/, '"/opt/zk"'],
];

describe('bad options', () => {
  afterAll(() => {
    // Nothing started: no JVM, no temporary directory, no socket (free ports are found with one).
    expect(launchServer).not.toHaveBeenCalled();
    expect(mkdtempSync).not.toHaveBeenCalled();
    expect(createServer).not.toHaveBeenCalled();
    expect(connect).not.toHaveBeenCalled();
  });

  it.each(wrongValues)('%s', async (_label, run, functionName, option, expected, received) => {
    const error = await errorOf(run);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.name).toBe('InvalidOptionError');
    expect([error.functionName, error.option, error.received]).toEqual([
      functionName,
      option,
      received,
    ]);
    expect(error.expected).toContain(expected as string);
    expect(error.message).toBe(
      `${functionName}: option ${option} must be ${error.expected}, got ${received}`,
    );
  });

  it.each(unknownKeys)(
    'an unknown key: %s',
    async (_label, run, functionName, option, expected, received) => {
      const error = await errorOf(run);
      expect(error.functionName).toBe(functionName);
      expect(error.option).toBe(option);
      expect(error.expected).toMatch(expected);
      expect(error.received).toBe(received);
      expect(error.message).toBe(`${functionName}: unknown option ${option}; ${error.expected}`);
    },
  );
});

describe('good options', () => {
  it('takes a RawSession back as the options to resume it', async () => {
    // A port nobody listens on: the options pass, the connection fails.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const session = {
      sessionId: '100000205df0000',
      password: 'ab'.repeat(16),
      timeoutMs: 4000,
      expired: false,
      response: {},
      closed: Promise.resolve(),
      close: () => Promise.resolve(),
      disconnect: () => {},
    };
    const error = await startRawSession(`127.0.0.1:${port}`, session as never).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(InvalidOptionError.isInstance(error)).toBe(false);
    expect(String(error)).toMatch(/ECONNREFUSED/);
  });

  it('lets undefined stand for an option not given', () => {
    expect(() =>
      locateZooKeeper({
        zookeeperHome: undefined,
        env: { ZOOKEEPER_HOME: undefined },
        debianJavaDir: '/nonexistent',
      }),
    ).not.toThrow(InvalidOptionError);
  });
});
