/**
 * A real ZooKeeper quorum on loopback (3 servers by default): each member has its own client,
 * quorum and election ports, `myid` and data; members can be stopped and started to test
 * failover, and — with dynamic reconfiguration — added, removed and replaced.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidOptionError, ZooKeeperStartError } from './errors';
import { fourLetterWord, mntr, parseServerMode } from './four-letter-words';
import { freePorts } from './free-port';
import { locateZooKeeper, type ZooKeeperInstallation } from './locate';
import { checkOptions, rule } from './options';
import {
  type EnsembleConfiguration,
  readConfiguration,
  reconfigure,
  superDigestProperty,
} from './reconfiguration';
import {
  baseTempDir,
  checkServerOptions,
  locateOptions,
  type ServerTlsOptions,
  type StartZooKeeperOptions,
  serverOptionRules,
  serverSystemProperties,
  tlsConfig,
} from './server';
import {
  DEFAULT_JVM_OPTIONS,
  launchServer,
  type ServerProcess,
  waitUntilServing,
} from './server-process';
import { type QuorumMember, renderZooCfg, serverLine } from './zoo-cfg';

/**
 * Options of {@link startEnsemble}: the size, reconfiguration, TLS, and the options of
 * {@link startZooKeeper} but `port` and `sasl`. A wrong one throws `InvalidOptionError` before
 * anything starts.
 */
export interface StartEnsembleOptions extends Omit<StartZooKeeperOptions, 'port' | 'tls' | 'sasl'> {
  /** How many servers; 3 by default. */
  size?: number;
  /**
   * The host name of the members' quorum and client addresses, as their `zoo.cfg` and the
   * configuration write it (a name that resolves to 127.0.0.1, e.g. `localhost`); `127.0.0.1`
   * by default. `addServer` takes its own.
   */
  host?: string;
  /**
   * Dynamic reconfiguration (`reconfigEnabled`, standalone mode off, a super user to run
   * `reconfig` as): {@link Ensemble.addServer}, {@link Ensemble.removeServer} and
   * {@link Ensemble.replaceServer} change the membership, and `/zookeeper/config` names every
   * member's client address for clients to follow. False by default.
   */
  reconfig?: boolean;
  /**
   * Every member also serves TLS on a port of its own (`securePort`, Netty), as
   * {@link startZooKeeper}'s `tls` does; with `portUnification`, its client port takes TLS too
   * (`client.portUnification`). ZooKeeper 3.8's configuration names no TLS port (that came with
   * ZOOKEEPER-4276, in 3.10): a client port that also takes TLS is how a TLS client can follow it.
   */
  tls?: EnsembleTlsOptions;
}

/** The TLS side of an ensemble's members. */
export interface EnsembleTlsOptions extends ServerTlsOptions {
  /** The client port takes TLS as well as plaintext (`client.portUnification`). False by default. */
  readonly portUnification?: boolean;
}

/** Options of {@link Ensemble.addServer}. */
export interface AddServerOptions {
  /**
   * The host name of its quorum and client addresses, as the configuration writes it (a name
   * that resolves to 127.0.0.1, e.g. `localhost`); `127.0.0.1` by default.
   */
  host?: string;
  /** `participant` (voting) by default, or `observer`. */
  role?: 'participant' | 'observer';
}

/** Options of {@link Ensemble.removeServer}. */
export interface RemoveServerOptions {
  /**
   * Stop the server's process once it is out of the configuration and its clients have left
   * (or `drainTimeoutMs` passed). True by default; false leaves it running (a removed server
   * still serves the sessions connected to it).
   */
  stop?: boolean;
  /**
   * How long to wait, before stopping it, for the sessions connected to the server to leave it
   * (its `cons` shows none): clients that follow the configuration move away. 30 s by default;
   * 0 stops it at once.
   */
  drainTimeoutMs?: number;
}

/** One member of an {@link Ensemble}. */
export interface EnsembleServer {
  /** The member's position in `ensemble.servers`, from 0. */
  readonly index: number;
  /** ZooKeeper's server id (`myid`, `server.N`): `index + 1`. */
  readonly serverId: number;
  /** `<host>:<port>` of this member alone. */
  readonly connectString: string;
  /** `127.0.0.1`, or the name given to {@link Ensemble.addServer}. */
  readonly host: string;
  readonly port: number;
  /** The TLS port (an ensemble started with `tls`). */
  readonly securePort: number | undefined;
  /** `<host>:<securePort>` (an ensemble started with `tls`). */
  readonly secureConnectString: string | undefined;
  /**
   * Whether the member is in the ensemble's configuration: true from its start (or its
   * {@link Ensemble.addServer}) until its {@link Ensemble.removeServer}.
   */
  readonly inConfiguration: boolean;
  readonly quorumPort: number;
  readonly electionPort: number;
  /** ZooKeeper's `dataDir`, kept while the member is stopped. */
  readonly dataDir: string;
  /** The member's log (the JVM's stdout and stderr). */
  readonly logFile: string;
  /** The JVM's process id; `undefined` while stopped. */
  readonly pid: number | undefined;
  /** Whether the member's JVM is running. */
  readonly running: boolean;
  /** Sends a four-letter word to this member. */
  fourLetterWord(word: string): Promise<string>;
  /** This member's `mntr` metrics, numbers parsed. */
  mntr(): Promise<Record<string, string | number>>;
  /** Same as `ensemble.stopServer(index)`: kills the member, keeps its data. */
  stop(): Promise<void>;
  /** Same as `ensemble.startServer(index)`: starts it again and waits until it has joined. */
  start(): Promise<void>;
  /** Stops then starts the member. */
  restart(): Promise<void>;
}

/** A running quorum started by {@link startEnsemble}. */
export interface Ensemble {
  /**
   * The `host:port` of every member in the configuration, comma separated, in index order: the
   * servers started, then those added, less those removed.
   */
  readonly connectString: string;
  /** `host:securePort` of the same members (an ensemble started with `tls`). */
  readonly secureConnectString: string | undefined;
  /** Every member ever started or added, in index order (removed ones stay, out of the configuration). */
  readonly servers: readonly EnsembleServer[];
  /** The ensemble's temp directory (one sub-directory a member); removed by `close()`. */
  readonly dir: string;
  /** Kills member `index` (SIGTERM, SIGKILL after 3 s); its data stays. */
  stopServer(index: number): Promise<void>;
  /** Starts member `index` again with its data, and waits until it serves (has joined the quorum). */
  startServer(index: number): Promise<void>;
  /**
   * Restarts member `index` cut off from the others: it cannot reach them nor they it (its
   * quorum and election ports change, its peers' are wrong), while clients still reach its
   * client port — a server partitioned from its quorum. With `readonlymode.enabled` it serves
   * read-only (waited for); otherwise it only answers four-letter words. `startServer` (after
   * `stopServer`) brings it back as a member.
   */
  isolateServer(index: number): Promise<void>;
  /**
   * The index of the member whose `srvr` says `Mode: leader`, waiting (up to `timeoutMs`,
   * 30 s by default) while an election is in progress.
   */
  leaderIndex(timeoutMs?: number): Promise<number>;
  /**
   * The index of the running member a session is connected to (from its `cons`), or undefined.
   * `sessionId` is hex as clients print it, with or without `0x`.
   */
  serverOf(sessionId: string): Promise<number | undefined>;
  /**
   * The configuration the ensemble serves (`/zookeeper/config`, read from a running member):
   * its version and servers.
   */
  configuration(): Promise<EnsembleConfiguration>;
  /**
   * Starts a new server (the next index and server id, fresh ports) and adds it to the
   * configuration (`reconfig -add`) once it has synced with the leader; resolves once the
   * configuration names it. Needs `reconfig`.
   */
  addServer(options?: AddServerOptions): Promise<EnsembleServer>;
  /**
   * Removes member `index` from the configuration (`reconfig -remove`), waits for the sessions
   * connected to it to leave (clients that follow the configuration move away, up to
   * `drainTimeoutMs`), then stops it. Needs `reconfig`.
   */
  removeServer(index: number, options?: RemoveServerOptions): Promise<void>;
  /**
   * Adds a new server, then removes member `index` (as {@link removeServer}): one step of a
   * rolling replacement. Resolves the new member. Needs `reconfig`.
   */
  replaceServer(
    index: number,
    options?: AddServerOptions & RemoveServerOptions,
  ): Promise<EnsembleServer>;
  /** Stops every member and removes `dir`. Idempotent. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const BIND_ATTEMPTS = 3;
const SERVING_MODES = ['leader', 'follower'];

const { port: _port, tls: serverTlsRule, sasl: _sasl, ...memberOptionRules } = serverOptionRules;
const ensembleOptionRules = {
  ...memberOptionRules,
  size: rule.positiveInteger,
  host: rule.string,
  reconfig: rule.boolean,
  tls: rule.object(
    'an object { certificate, privateKey, ca?, clientAuth?, portUnification? } (PEM strings, e.g. createTestCertificates().server)',
    { ...serverTlsRule.fields, portUnification: rule.boolean },
  ),
};
const addServerRules = { host: rule.string, role: rule.oneOf(['participant', 'observer']) };
const removeServerRules = {
  stop: rule.boolean,
  drainTimeoutMs: {
    expected: 'a number of ms, 0 or more',
    valid: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0,
  },
};

/** The drain a removed server gets before it is stopped, by default. */
const DEFAULT_DRAIN_MS = 30_000;

interface Member {
  index: number;
  serverId: number;
  host: string;
  role: 'participant' | 'observer';
  port: number;
  quorumPort: number;
  electionPort: number;
  securePort: number | undefined;
  serverDir: string;
  dataDir: string;
  jvm: ServerProcess | undefined;
  inConfiguration: boolean;
}

/** What every member of one ensemble is started with. */
interface EnsembleSetup {
  readonly installation: ZooKeeperInstallation;
  readonly options: StartEnsembleOptions;
  readonly dir: string;
  /** The super user's password (with `reconfig`). */
  readonly superPassword: string | undefined;
}

/**
 * Starts a real ZooKeeper ensemble on loopback and resolves once every member serves.
 *
 * ## Example
 *
 * ```ts
 * const ensemble = await startEnsemble({ size: 3 });
 * const leader = await ensemble.leaderIndex();
 * await ensemble.stopServer(leader);
 * console.log((await ensemble.leaderIndex()) !== leader);
 * await ensemble.close();
 * // Output: true
 * ```
 *
 * @param options Size (3 by default) and server options; see {@link StartEnsembleOptions}.
 * @return The running ensemble.
 */
export async function startEnsemble(options: StartEnsembleOptions = {}): Promise<Ensemble> {
  checkServerOptions('startEnsemble', options, ensembleOptionRules);
  const size = options.size ?? 3;
  const installation = locateZooKeeper(locateOptions(options));
  const dir = mkdtempSync(join(baseTempDir(options.tmpfs), 'zkrx-ensemble-'));
  const setup: EnsembleSetup = {
    installation,
    options,
    dir,
    superPassword: options.reconfig ? randomBytes(12).toString('hex') : undefined,
  };
  try {
    for (let attempt = 1; ; attempt++) {
      const members = await layOut(dir, size, options);
      for (const member of members) member.host = options.host ?? HOST;
      try {
        await Promise.all(members.map((member) => startMember(setup, member, members)));
        return ensembleHandle(setup, members);
      } catch (error) {
        await Promise.all(members.map((member) => member.jvm?.stop()));
        const retry =
          ZooKeeperStartError.isInstance(error) && error.bindFailed && attempt < BIND_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** How many ports a member takes: client, quorum, election, and TLS with `tls`. */
function portsPerMember(options: StartEnsembleOptions): number {
  return options.tls ? 4 : 3;
}

/** A member on fresh ports, its directory made and its `myid` written. */
function newMember(
  dir: string,
  index: number,
  serverId: number,
  ports: readonly number[],
  extra: { host?: string; role?: 'participant' | 'observer' } = {},
): Member {
  const serverDir = join(dir, `server-${serverId}`);
  rmSync(serverDir, { recursive: true, force: true });
  const dataDir = join(serverDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'myid'), `${serverId}\n`);
  return {
    index,
    serverId,
    host: extra.host ?? HOST,
    role: extra.role ?? 'participant',
    port: ports[0]!,
    quorumPort: ports[1]!,
    electionPort: ports[2]!,
    securePort: ports[3],
    serverDir,
    dataDir,
    jvm: undefined,
    inConfiguration: true,
  };
}

/** Fresh ports for every member, `myid`s and `zoo.cfg`s (a retry starts from empty data). */
async function layOut(dir: string, size: number, options: StartEnsembleOptions): Promise<Member[]> {
  const each = portsPerMember(options);
  const ports = await freePorts(size * each, HOST);
  return Array.from({ length: size }, (_, index) =>
    newMember(dir, index, index + 1, ports.slice(index * each, (index + 1) * each)),
  );
}

/** A member's `server.N` entry. */
function quorumEntry(member: Member): QuorumMember {
  return {
    id: member.serverId,
    quorumPort: member.quorumPort,
    electionPort: member.electionPort,
    host: member.host,
    role: member.role,
    clientPort: member.port,
  };
}

/** A member's `zoo.cfg`: the ensemble's quorum, or another one (to isolate the member). */
function writeMemberConfig(
  member: Member,
  setup: EnsembleSetup,
  quorum: readonly QuorumMember[],
): void {
  const { options } = setup;
  const tls = options.tls;
  writeFileSync(
    join(member.serverDir, 'zoo.cfg'),
    renderZooCfg({
      dataDir: member.dataDir,
      clientPort: member.port,
      host: HOST,
      tickTime: options.tickTime ?? 500,
      minSessionTimeoutMs: options.minSessionTimeoutMs,
      maxSessionTimeoutMs: options.maxSessionTimeoutMs,
      quorum,
      reconfigEnabled: options.reconfig === true,
      extraConfig: {
        ...(tls && member.securePort !== undefined
          ? {
              ...tlsConfig(member.serverDir, tls, member.securePort),
              ...(tls.portUnification ? { 'client.portUnification': 'true' } : {}),
            }
          : {}),
        ...options.extraConfig,
      },
    }),
  );
}

/**
 * Writes a member's `zoo.cfg` for `quorum` (the ensemble's members by default) and starts it,
 * waiting until it serves in one of `modes`.
 */
async function startMember(
  setup: EnsembleSetup,
  member: Member,
  quorum: readonly Member[],
  modes: readonly string[] | 'answering' = SERVING_MODES,
  entries: readonly QuorumMember[] = quorum.map(quorumEntry),
): Promise<void> {
  const { installation, options, dir, superPassword } = setup;
  writeMemberConfig(member, setup, entries);
  member.jvm = launchServer({
    installation,
    serverDir: member.serverDir,
    cleanupDir: dir,
    jvmOptions: options.jvmOptions ?? DEFAULT_JVM_OPTIONS,
    logLevel: options.logLevel ?? 'warn',
    systemProperties: {
      // Election notifications back off up to 60 s by default; a test wants a peer that comes
      // back (startServer) to be noticed within a couple of seconds.
      'zookeeper.fastleader.maxNotificationInterval': '2000',
      ...(superPassword === undefined ? {} : superDigestProperty(superPassword)),
      ...serverSystemProperties(options),
    },
  });
  await waitUntilServing(member.jvm, {
    hostPort: `${HOST}:${member.port}`,
    dataDir: member.dataDir,
    modes,
    timeoutMs: options.startTimeoutMs ?? 60_000,
  });
}

/** Where this package talks to a member (its client port on loopback, whatever its name). */
function adminAddress(member: Member): string {
  return `${HOST}:${member.port}`;
}

/** The ids of the sessions connected to a server (its `cons`). */
async function connectedSessions(hostPort: string): Promise<string[]> {
  const cons = await fourLetterWord(hostPort, 'cons', 2_000).catch(() => '');
  return [...cons.matchAll(/sid=(0x[0-9a-f]+)/gi)].map((match) => match[1]!.toLowerCase());
}

function ensembleHandle(setup: EnsembleSetup, members: Member[]): Ensemble {
  const { options, dir } = setup;
  let closed: Promise<void> | undefined;
  const member = (index: number): Member => {
    const found = members[index];
    if (!found) throw new RangeError(`No server ${index} in an ensemble of ${members.length}`);
    if (closed) throw new Error('The ensemble is closed');
    return found;
  };
  const inConfiguration = () => members.filter((m) => m.inConfiguration);
  // Membership changes run one after the other (a reconfig waits for the previous one anyway).
  let changes: Promise<unknown> = Promise.resolve();
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const next = changes.then(step, step);
    changes = next.catch(() => {});
    return next;
  };
  const needsReconfig = (what: string): string => {
    if (setup.superPassword === undefined) {
      throw new InvalidOptionError(
        what,
        'reconfig',
        'true at startEnsemble to change the membership',
        String(options.reconfig ?? false),
      );
    }
    return setup.superPassword;
  };
  /** A running member of the configuration to ask. */
  const anyRunning = (): Member => {
    const running = inConfiguration().find((m) => m.jvm && !m.jvm.exited);
    if (!running) throw new Error('No member of the configuration is running');
    return running;
  };
  const stopServer = async (index: number) => {
    await member(index).jvm?.stop();
  };
  const startServer = async (index: number) => {
    const m = member(index);
    if (m.jvm && !m.jvm.exited) return;
    if (!m.inConfiguration) {
      throw new Error(
        `Server ${m.serverId} was removed from the configuration: addServer starts a new one`,
      );
    }
    await startMember(setup, m, inConfiguration());
  };
  const isolateServer = async (index: number) => {
    const m = member(index);
    await m.jvm?.stop();
    // Fresh ports for every peer entry, its own included: nobody listens where it calls, and
    // it listens where nobody calls.
    const quorum = inConfiguration();
    const ports = await freePorts(quorum.length * 2, HOST);
    const entries = quorum.map((other, position) => ({
      ...quorumEntry(other),
      quorumPort: ports[position * 2]!,
      electionPort: ports[position * 2 + 1]!,
    }));
    const readOnly = serverSystemProperties(options)['readonlymode.enabled'] === 'true';
    await startMember(setup, m, quorum, readOnly ? ['read-only'] : 'answering', entries);
  };
  const servers: EnsembleServer[] = [];
  const serverOfMember = (m: Member): EnsembleServer => ({
    index: m.index,
    serverId: m.serverId,
    connectString: `${m.host}:${m.port}`,
    host: m.host,
    port: m.port,
    securePort: m.securePort,
    secureConnectString: m.securePort === undefined ? undefined : `${m.host}:${m.securePort}`,
    get inConfiguration() {
      return m.inConfiguration;
    },
    quorumPort: m.quorumPort,
    electionPort: m.electionPort,
    dataDir: m.dataDir,
    logFile: join(m.serverDir, 'zookeeper.log'),
    get pid() {
      return m.jvm && !m.jvm.exited ? m.jvm.pid : undefined;
    },
    get running() {
      return m.jvm !== undefined && !m.jvm.exited;
    },
    fourLetterWord: (word) => fourLetterWord(`${HOST}:${m.port}`, word),
    mntr: () => mntr(`${HOST}:${m.port}`),
    stop: () => stopServer(m.index),
    start: () => startServer(m.index),
    restart: async () => {
      await stopServer(m.index);
      await startServer(m.index);
    },
  });
  for (const m of members) servers.push(serverOfMember(m));

  const addServer = async (given: AddServerOptions = {}) => {
    checkOptions('addServer', given, addServerRules);
    const password = needsReconfig('addServer');
    return serially(async () => {
      if (closed) throw new Error('The ensemble is closed');
      const serverId = Math.max(...members.map((m) => m.serverId)) + 1;
      const ports = await freePorts(portsPerMember(options), HOST);
      const joiner = newMember(dir, members.length, serverId, ports, given);
      // The joiner starts with the configuration plus itself listed as an observer: it finds
      // the leader, syncs as a non-voting follower, and cannot form a quorum of its own
      // (ZooKeeper's reconfiguration guide, "Adding servers").
      const entries = [
        ...inConfiguration().map(quorumEntry),
        { ...quorumEntry(joiner), role: 'observer' as const },
      ];
      members.push(joiner);
      servers.push(serverOfMember(joiner));
      joiner.inConfiguration = false;
      await startMember(setup, joiner, [], ['follower', 'observer'], entries);
      const through = () =>
        inConfiguration()
          .filter((m) => m.jvm && !m.jvm.exited)
          .map(adminAddress);
      const configuration = await reconfigure(through, password, {
        joining: [`server.${serverId}=${serverLine(quorumEntry(joiner), HOST)}`],
      });
      if (!configuration.servers.some((server) => server.serverId === serverId)) {
        throw new Error(`reconfig did not add server ${serverId}: ${configuration.text}`);
      }
      joiner.inConfiguration = true;
      return servers[joiner.index]!;
    });
  };

  const removeServer = async (index: number, given: RemoveServerOptions = {}) => {
    checkOptions('removeServer', given, removeServerRules);
    const password = needsReconfig('removeServer');
    const leaving = member(index);
    return serially(async () => {
      if (!leaving.inConfiguration) return;
      const through = () =>
        inConfiguration()
          .filter((m) => m !== leaving && m.jvm !== undefined && !m.jvm.exited)
          .map(adminAddress);
      if (through().length === 0) {
        throw new Error(`No other running member to remove server ${leaving.serverId}`);
      }
      await reconfigure(through, password, { leaving: [leaving.serverId] });
      leaving.inConfiguration = false;
      if (given.stop === false) return;
      const deadline = Date.now() + (given.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
      while (Date.now() < deadline && leaving.jvm && !leaving.jvm.exited) {
        if ((await connectedSessions(`${HOST}:${leaving.port}`)).length === 0) break;
        await sleep(100);
      }
      await leaving.jvm?.stop();
    });
  };

  return {
    get connectString() {
      return inConfiguration()
        .map((m) => `${m.host}:${m.port}`)
        .join(',');
    },
    get secureConnectString() {
      if (!options.tls) return undefined;
      return inConfiguration()
        .map((m) => `${m.host}:${m.securePort}`)
        .join(',');
    },
    servers,
    dir,
    stopServer,
    startServer,
    isolateServer,
    async leaderIndex(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const server of servers) {
          if (!server.running) continue;
          const srvr = await server.fourLetterWord('srvr').catch(() => '');
          if (parseServerMode(srvr) === 'leader') return server.index;
        }
        if (Date.now() >= deadline) {
          throw new Error(`No leader in the ensemble after ${timeoutMs} ms`);
        }
        await sleep(100);
      }
    },
    configuration: async () => readConfiguration(adminAddress(anyRunning())),
    addServer,
    removeServer,
    async replaceServer(index, given = {}) {
      const { host, role, stop, drainTimeoutMs } = given;
      checkOptions('replaceServer', given, { ...addServerRules, ...removeServerRules });
      member(index);
      const added = await addServer({
        ...(host === undefined ? {} : { host }),
        ...(role === undefined ? {} : { role }),
      });
      await removeServer(index, {
        ...(stop === undefined ? {} : { stop }),
        ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
      });
      return added;
    },
    async serverOf(sessionId) {
      const wanted = `sid=0x${sessionId.replace(/^0x/i, '').toLowerCase()},`;
      for (const server of servers) {
        if (!server.running) continue;
        const cons = await server.fourLetterWord('cons').catch(() => '');
        if (cons.toLowerCase().includes(wanted)) return server.index;
      }
      return undefined;
    },
    close() {
      closed ??= (async () => {
        await Promise.all(members.map((m) => m.jvm?.stop()));
        rmSync(dir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
