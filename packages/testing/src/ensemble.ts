/**
 * A real ZooKeeper quorum on loopback (3 servers by default): each member has its own client,
 * quorum and election ports, `myid` and data; members can be stopped and started to test failover.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeperStartError } from './errors';
import { fourLetterWord, mntr, parseServerMode } from './four-letter-words';
import { freePorts } from './free-port';
import { locateZooKeeper, type ZooKeeperInstallation } from './locate';
import { rule } from './options';
import {
  baseTempDir,
  checkServerOptions,
  locateOptions,
  type StartZooKeeperOptions,
  serverOptionRules,
  serverSystemProperties,
} from './server';
import {
  DEFAULT_JVM_OPTIONS,
  launchServer,
  type ServerProcess,
  waitUntilServing,
} from './server-process';
import { renderZooCfg } from './zoo-cfg';

/**
 * Options of {@link startEnsemble}: the size, and the options of {@link startZooKeeper} but
 * `port`, `tls` and `sasl`. A wrong one throws `InvalidOptionError` before anything starts.
 */
export interface StartEnsembleOptions extends Omit<StartZooKeeperOptions, 'port' | 'tls' | 'sasl'> {
  /** How many servers; 3 by default. */
  size?: number;
}

/** One member of an {@link Ensemble}. */
export interface EnsembleServer {
  /** The member's position in `ensemble.servers`, from 0. */
  readonly index: number;
  /** ZooKeeper's server id (`myid`, `server.N`): `index + 1`. */
  readonly serverId: number;
  /** `127.0.0.1:<port>` of this member alone. */
  readonly connectString: string;
  readonly host: string;
  readonly port: number;
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
  /** Every member's `host:port`, comma separated, in index order. */
  readonly connectString: string;
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
  /** Stops every member and removes `dir`. Idempotent. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const BIND_ATTEMPTS = 3;
const SERVING_MODES = ['leader', 'follower'];

const { port: _port, tls: _tls, sasl: _sasl, ...memberOptionRules } = serverOptionRules;
const ensembleOptionRules = { ...memberOptionRules, size: rule.positiveInteger };

interface Member {
  index: number;
  serverId: number;
  port: number;
  quorumPort: number;
  electionPort: number;
  serverDir: string;
  dataDir: string;
  jvm: ServerProcess | undefined;
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
  try {
    for (let attempt = 1; ; attempt++) {
      const members = await layOut(dir, size, options);
      try {
        await Promise.all(members.map((member) => startMember(installation, options, dir, member)));
        return ensembleHandle(installation, options, dir, members);
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

/** Fresh ports for every member, `myid`s and `zoo.cfg`s (a retry starts from empty data). */
async function layOut(dir: string, size: number, options: StartEnsembleOptions): Promise<Member[]> {
  const ports = await freePorts(size * 3, HOST);
  const members: Member[] = Array.from({ length: size }, (_, index) => {
    const serverDir = join(dir, `server-${index + 1}`);
    return {
      index,
      serverId: index + 1,
      port: ports[index * 3]!,
      quorumPort: ports[index * 3 + 1]!,
      electionPort: ports[index * 3 + 2]!,
      serverDir,
      dataDir: join(serverDir, 'data'),
      jvm: undefined,
    };
  });
  for (const member of members) {
    rmSync(member.serverDir, { recursive: true, force: true });
    mkdirSync(member.dataDir, { recursive: true });
    writeFileSync(join(member.dataDir, 'myid'), `${member.serverId}\n`);
    writeMemberConfig(member, members, options);
  }
  return members;
}

/** A member's `zoo.cfg`: the ensemble's quorum, or another one (to isolate the member). */
function writeMemberConfig(
  member: Member,
  members: readonly Member[],
  options: StartEnsembleOptions,
  quorum = members.map(({ serverId, quorumPort, electionPort }) => ({
    id: serverId,
    quorumPort,
    electionPort,
  })),
): void {
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
      extraConfig: options.extraConfig,
    }),
  );
}

async function startMember(
  installation: ZooKeeperInstallation,
  options: StartEnsembleOptions,
  dir: string,
  member: Member,
  modes: readonly string[] | 'answering' = SERVING_MODES,
): Promise<void> {
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

function ensembleHandle(
  installation: ZooKeeperInstallation,
  options: StartEnsembleOptions,
  dir: string,
  members: Member[],
): Ensemble {
  let closed: Promise<void> | undefined;
  const member = (index: number): Member => {
    const found = members[index];
    if (!found) throw new RangeError(`No server ${index} in an ensemble of ${members.length}`);
    if (closed) throw new Error('The ensemble is closed');
    return found;
  };
  const stopServer = async (index: number) => {
    await member(index).jvm?.stop();
  };
  const startServer = async (index: number) => {
    const m = member(index);
    if (m.jvm && !m.jvm.exited) return;
    writeMemberConfig(m, members, options);
    await startMember(installation, options, dir, m);
  };
  const isolateServer = async (index: number) => {
    const m = member(index);
    await m.jvm?.stop();
    // Fresh ports for every peer entry, its own included: nobody listens where it calls, and
    // it listens where nobody calls.
    const ports = await freePorts(members.length * 2, HOST);
    const quorum = members.map((other, position) => ({
      id: other.serverId,
      quorumPort: ports[position * 2]!,
      electionPort: ports[position * 2 + 1]!,
    }));
    writeMemberConfig(m, members, options, quorum);
    const readOnly = serverSystemProperties(options)['readonlymode.enabled'] === 'true';
    await startMember(installation, options, dir, m, readOnly ? ['read-only'] : 'answering');
  };
  const servers = members.map(
    (m): EnsembleServer => ({
      index: m.index,
      serverId: m.serverId,
      connectString: `${HOST}:${m.port}`,
      host: HOST,
      port: m.port,
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
    }),
  );

  return {
    connectString: servers.map((server) => server.connectString).join(','),
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
