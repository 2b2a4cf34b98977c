/**
 * A real standalone ZooKeeper on a free loopback port with its own temp directory, for tests and
 * demos: start, stop, restart on the same port and data, four-letter words.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZooKeeperStartError } from './errors';
import { fourLetterWord, mntr } from './four-letter-words';
import { freePorts } from './free-port';
import { type LocateZooKeeperOptions, locateZooKeeper, type ZooKeeperInstallation } from './locate';
import { badOption, checkOptions, type OptionRules, rule } from './options';
import {
  DEFAULT_JVM_OPTIONS,
  launchServer,
  type ServerProcess,
  waitUntilServing,
  type ZooKeeperLogLevel,
} from './server-process';
import { renderZooCfg } from './zoo-cfg';

/**
 * Options of {@link startZooKeeper}; every field is optional. A wrong type or value, or a key not
 * listed here, throws `InvalidOptionError` before anything starts.
 */
export interface StartZooKeeperOptions {
  /** Client port; a free one by default (then a failed bind is retried on another port). */
  port?: number;
  /** ZooKeeper's tick in ms; 500 by default, so sessions of 1 s (2 ticks) to 10 s (20 ticks) are allowed. */
  tickTime?: number;
  /** Lowest session timeout the server grants; 2 × tickTime by default. */
  minSessionTimeoutMs?: number;
  /** Highest session timeout the server grants; 20 × tickTime by default. */
  maxSessionTimeoutMs?: number;
  /** Put the data directory under `/dev/shm` when it exists: fsync then costs ~nothing. */
  tmpfs?: boolean;
  /** JVM options; by default a small heap, serial GC and C1 only, for a fast start. */
  jvmOptions?: readonly string[];
  /** Extra Java system properties (`-Dkey=value`), e.g. ZooKeeper's `zookeeper.*` switches. */
  systemProperties?: Readonly<Record<string, string>>;
  /**
   * How often the server deletes empty container nodes (ZooKeeper's
   * `znode.container.checkIntervalMs`, 60 s by default). A short one (e.g. 100) lets a test see
   * an idle lock path reaped, as it would be in production after a minute.
   */
  containerCheckIntervalMs?: number;
  /** How long to wait for the server to serve; 30 s by default. */
  startTimeoutMs?: number;
  /** Any `zoo.cfg` key, overriding the defaults. */
  extraConfig?: Readonly<Record<string, string>>;
  /** Level of the server's log file (`logFile`); `warn` by default. */
  logLevel?: ZooKeeperLogLevel;
  /** An unpacked upstream release to use instead of looking for one. */
  zookeeperHome?: string;
  /**
   * Also serve TLS on a second port (`secureClientPort`, Netty): the server's certificate and
   * key (PEM, e.g. from `createTestCertificates().server`), and whether clients must present a
   * certificate signed by `ca`.
   */
  tls?: ServerTlsOptions;
  /**
   * SASL DIGEST-MD5 logins (`user: password`): a JAAS `Server` section with ZooKeeper's
   * DigestLoginModule, and the SASL authentication provider. A client that authenticates as
   * `alice` passes ACLs `sasl:alice`.
   */
  sasl?: { readonly users: Readonly<Record<string, string>> };
}

/** The TLS side of a test server. */
export interface ServerTlsOptions {
  /** The server's certificate chain, PEM. */
  readonly certificate: string;
  /** Its private key, PEM (unencrypted). */
  readonly privateKey: string;
  /** CA certificates (PEM) that client certificates must chain to; required unless `clientAuth` is `none`. */
  readonly ca?: string;
  /** `none` by default: any client, no certificate asked. */
  readonly clientAuth?: 'none' | 'want' | 'need';
}

/** A running standalone ZooKeeper started by {@link startZooKeeper}. */
export interface ZooKeeperServer {
  /** `127.0.0.1:<port>`, to give to a client. */
  readonly connectString: string;
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:<securePort>` when started with `tls`: the TLS port. */
  readonly secureConnectString: string | undefined;
  readonly securePort: number | undefined;
  /** ZooKeeper's `dataDir` (snapshots and transaction logs). */
  readonly dataDir: string;
  /** The server's own temp directory: `zoo.cfg`, `zookeeper.log` and `data/`; removed by `close()`. */
  readonly dir: string;
  /** The server's log (the JVM's stdout and stderr). */
  readonly logFile: string;
  /** The JVM's process id (a new one after `restart()`). */
  readonly pid: number;
  /**
   * Kills the server (SIGTERM, SIGKILL after 3 s), waits for it to exit and removes `dir`: the
   * server is done (`restart()` is refused). Idempotent.
   */
  close(): Promise<void>;
  /** Stops the server and starts it again on the same port with the same data: sessions survive. */
  restart(): Promise<void>;
  /** Sends a four-letter word (`srvr`, `cons`, `wchc`, ...) to this server. */
  fourLetterWord(word: string): Promise<string>;
  /** This server's `mntr` metrics, numbers parsed. */
  mntr(): Promise<Record<string, string | number>>;
}

const HOST = '127.0.0.1';
const BIND_ATTEMPTS = 3;

/** The options a server takes, standalone or as a member of an ensemble (less port, tls, sasl). */
export const serverOptionRules = {
  port: rule.port(1),
  tickTime: rule.positiveInteger,
  minSessionTimeoutMs: rule.positiveInteger,
  maxSessionTimeoutMs: rule.positiveInteger,
  tmpfs: rule.boolean,
  jvmOptions: rule.strings,
  systemProperties: rule.stringRecord,
  containerCheckIntervalMs: rule.positiveInteger,
  startTimeoutMs: rule.positiveNumber,
  extraConfig: rule.stringRecord,
  logLevel: rule.oneOf(['error', 'warn', 'info', 'debug']),
  zookeeperHome: rule.string,
  tls: rule.object(
    'an object { certificate, privateKey, ca?, clientAuth? } (PEM strings, e.g. createTestCertificates().server)',
    {
      certificate: { ...rule.pem('certificate'), required: true },
      privateKey: { ...rule.pem('private key'), required: true },
      ca: rule.pem('certificate'),
      clientAuth: rule.oneOf(['none', 'want', 'need']),
    },
  ),
  sasl: rule.object('an object { users: { name: password } }', {
    users: {
      expected: 'an object of user names to passwords ({ alice: "wonderland" })',
      valid: rule.stringRecord.valid,
      required: true,
    },
  }),
} satisfies OptionRules;

/**
 * Checks a server's options ({@link checkOptions} with `rules`, then what involves several):
 * before anything starts.
 *
 * @param functionName `startZooKeeper` or `startEnsemble`, for the error.
 * @param options What the caller passed.
 * @param rules The options the function takes.
 * @throws InvalidOptionError naming the first bad option.
 */
export function checkServerOptions(
  functionName: string,
  options: unknown,
  rules: OptionRules,
): void {
  checkOptions(functionName, options, rules);
  const given = (options ?? {}) as StartZooKeeperOptions;
  const { minSessionTimeoutMs: min, maxSessionTimeoutMs: max } = given;
  if (min !== undefined && max !== undefined && min > max) {
    throw badOption(
      functionName,
      'minSessionTimeoutMs',
      `at most maxSessionTimeoutMs (${max})`,
      min,
    );
  }
  const clientAuth = given.tls?.clientAuth ?? 'none';
  if (clientAuth !== 'none' && given.tls?.ca === undefined) {
    throw badOption(
      functionName,
      'tls.ca',
      `the CA certificate client certificates must chain to (tls.clientAuth is '${clientAuth}')`,
      undefined,
    );
  }
  for (const [user, password] of Object.entries(given.sasl?.users ?? {})) {
    if (!/^[\w.-]+$/.test(user)) {
      throw badOption(functionName, 'sasl.users', 'user names of [A-Za-z0-9_.-] only', user);
    }
    if (/["\\\n]/.test(password)) {
      throw badOption(
        functionName,
        `sasl.users.${user}`,
        'a password without a quote, a backslash or a new line',
        password,
      );
    }
  }
}

/**
 * Starts a real standalone ZooKeeper on a free loopback port, with its own temp data directory.
 *
 * The server is killed and its directory removed when this process exits, even if it is killed:
 * a detached watchdog does it within a second.
 *
 * ## Example
 *
 * ```ts
 * const server = await startZooKeeper();
 * console.log(await server.fourLetterWord('ruok'));
 * await server.close();
 * // Output: imok
 * ```
 *
 * @param options Port, tick, session timeout bounds, JVM options...; see {@link StartZooKeeperOptions}.
 * @return The running server.
 */
export async function startZooKeeper(
  options: StartZooKeeperOptions = {},
): Promise<ZooKeeperServer> {
  checkServerOptions('startZooKeeper', options, serverOptionRules);
  const installation = locateZooKeeper(locateOptions(options));
  const dir = mkdtempSync(join(baseTempDir(options.tmpfs), 'zkrx-zk-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  try {
    for (let attempt = 1; ; attempt++) {
      const [free, freeSecure] = await freePorts(2, HOST);
      const port = options.port ?? free!;
      const securePort = options.tls ? freeSecure : undefined;
      try {
        const setup: ServerSetup = { installation, options, dir, dataDir, port, securePort };
        return serverHandle(setup, await launchAndWait(setup));
      } catch (error) {
        const retry =
          ZooKeeperStartError.isInstance(error) &&
          error.bindFailed &&
          options.port === undefined &&
          attempt < BIND_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Where one server lives: what {@link launchAndWait} starts, again on each restart. */
interface ServerSetup {
  readonly installation: ZooKeeperInstallation;
  readonly options: StartZooKeeperOptions;
  /** The server's directory (zoo.cfg, logs, keys), removed on close. */
  readonly dir: string;
  readonly dataDir: string;
  readonly port: number;
  readonly securePort: number | undefined;
}

async function launchAndWait(setup: ServerSetup): Promise<ServerProcess> {
  const { installation, options, dir, dataDir, port, securePort } = setup;
  writeFileSync(
    join(dir, 'zoo.cfg'),
    renderZooCfg({
      dataDir,
      clientPort: port,
      host: HOST,
      tickTime: options.tickTime ?? 500,
      minSessionTimeoutMs: options.minSessionTimeoutMs,
      maxSessionTimeoutMs: options.maxSessionTimeoutMs,
      extraConfig: {
        ...(options.tls && securePort !== undefined ? tlsConfig(dir, options.tls, securePort) : {}),
        ...(options.sasl
          ? { 'authProvider.sasl': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider' }
          : {}),
        ...options.extraConfig,
      },
    }),
  );
  const jvm = launchServer({
    installation,
    serverDir: dir,
    cleanupDir: dir,
    jvmOptions: options.jvmOptions ?? DEFAULT_JVM_OPTIONS,
    logLevel: options.logLevel ?? 'warn',
    systemProperties: { ...serverSystemProperties(options), ...saslSetup(dir, options.sasl) },
  });
  await waitUntilServing(jvm, {
    hostPort: `${HOST}:${port}`,
    dataDir,
    modes: ['standalone'],
    timeoutMs: options.startTimeoutMs ?? 30_000,
  });
  return jvm;
}

/**
 * The JAAS file of a server with SASL DIGEST-MD5 logins, written into its directory; the system
 * property that points the JVM at it.
 *
 * @param dir The server's directory.
 * @param sasl The logins, or none.
 * @return The system properties to add.
 */
export function saslSetup(
  dir: string,
  sasl: StartZooKeeperOptions['sasl'],
): Record<string, string> {
  if (!sasl) return {};
  // Names and passwords were checked by checkServerOptions: nothing to escape here.
  const users = Object.entries(sasl.users);
  const file = join(dir, 'jaas.conf');
  const lines = users.map(([user, password]) => `  user_${user}="${password}"`).join('\n');
  writeFileSync(
    file,
    `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${lines};\n};\n`,
    { mode: 0o600 },
  );
  return { 'java.security.auth.login.config': file };
}

/** The system properties a server is started with: the caller's, and the container check. */
export function serverSystemProperties(
  options: Pick<StartZooKeeperOptions, 'systemProperties' | 'containerCheckIntervalMs'>,
): Record<string, string> {
  const properties: Record<string, string> = { ...options.systemProperties };
  const interval = options.containerCheckIntervalMs;
  if (interval !== undefined) properties['znode.container.checkIntervalMs'] = String(interval);
  return properties;
}

function serverHandle(setup: ServerSetup, firstJvm: ServerProcess): ZooKeeperServer {
  const { dir, dataDir, port, securePort } = setup;
  const connectString = `${HOST}:${port}`;
  let jvm = firstJvm;
  let closed: Promise<void> | undefined;
  // restart() and close() run one after the other, never interleaved.
  let lifecycle: Promise<unknown> = Promise.resolve();
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const next = lifecycle.then(step, step);
    lifecycle = next.catch(() => {});
    return next;
  };

  const close = () => {
    closed ??= serially(async () => {
      await jvm.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    return closed;
  };

  return {
    connectString,
    host: HOST,
    port,
    secureConnectString: securePort === undefined ? undefined : `${HOST}:${securePort}`,
    securePort,
    dataDir,
    dir,
    logFile: join(dir, 'zookeeper.log'),
    get pid() {
      return jvm.pid;
    },
    close,
    restart() {
      if (closed) return Promise.reject(new Error(`ZooKeeper ${connectString} was closed`));
      return serially(async () => {
        if (closed) throw new Error(`ZooKeeper ${connectString} was closed`);
        await jvm.stop();
        jvm = await launchAndWait(setup);
      });
    },
    fourLetterWord(word) {
      return fourLetterWord(connectString, word);
    },
    mntr() {
      return mntr(connectString);
    },
  };
}

/**
 * The zoo.cfg lines of a TLS port: Netty (the only connection factory with TLS), PEM key and
 * trust stores written into the server's directory. Unknown zoo.cfg keys become `zookeeper.*`
 * system properties, which is where ZooKeeper reads its `ssl.*` settings.
 *
 * @param dir The server's directory.
 * @param tls The certificate, key and client authentication.
 * @param securePort The TLS port.
 * @return The zoo.cfg entries.
 */
export function tlsConfig(
  dir: string,
  tls: ServerTlsOptions,
  securePort: number,
): Record<string, string> {
  const clientAuth = tls.clientAuth ?? 'none';
  const keyStore = join(dir, 'keystore.pem');
  const trustStore = join(dir, 'truststore.pem');
  writeFileSync(keyStore, `${tls.privateKey.trim()}\n${tls.certificate.trim()}\n`, { mode: 0o600 });
  writeFileSync(trustStore, `${(tls.ca ?? tls.certificate).trim()}\n`);
  return {
    secureClientPort: String(securePort),
    secureClientPortAddress: HOST,
    serverCnxnFactory: 'org.apache.zookeeper.server.NettyServerCnxnFactory',
    'ssl.keyStore.location': keyStore,
    'ssl.keyStore.type': 'PEM',
    'ssl.trustStore.location': trustStore,
    'ssl.trustStore.type': 'PEM',
    'ssl.clientAuth': clientAuth,
    // A client certificate authenticates the session as x509:<its subject> (ACL scheme x509).
    ...(clientAuth === 'none'
      ? {}
      : { 'authProvider.x509': 'org.apache.zookeeper.server.auth.X509AuthenticationProvider' }),
  };
}

/**
 * The parent of test servers' directories: `/dev/shm` when asked and present, else the OS temp dir.
 *
 * @param tmpfs Whether to prefer `/dev/shm`.
 * @return An existing directory.
 */
export function baseTempDir(tmpfs = false): string {
  return tmpfs && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/**
 * Picks the locate options out of start options.
 *
 * @param options Start options with an optional `zookeeperHome`.
 * @return What {@link locateZooKeeper} needs.
 */
export function locateOptions(options: { zookeeperHome?: string }): LocateZooKeeperOptions {
  return options.zookeeperHome ? { zookeeperHome: options.zookeeperHome } : {};
}
