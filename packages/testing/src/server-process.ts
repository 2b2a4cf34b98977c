/**
 * One ZooKeeper JVM: spawn it with a given `zoo.cfg`, wait until it serves clients, stop it.
 * Shared by the standalone server and the ensemble members; knows nothing about ports' origin.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZooKeeperStartError } from './errors';
import { fourLetterWord, parseServerMode } from './four-letter-words';
import type { ZooKeeperInstallation } from './locate';
import { type ReaperTicket, trackServerProcess } from './reaper';

/** Level of the server's own log (its file is `zookeeper.log` in the server's directory). */
export type ZooKeeperLogLevel = 'error' | 'warn' | 'info' | 'debug';

/** JVM options that favour a fast start over throughput. */
export const DEFAULT_JVM_OPTIONS: readonly string[] = [
  '-Xms64m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:-UsePerfData',
];

/** What to launch. */
export interface LaunchOptions {
  installation: ZooKeeperInstallation;
  /** The server's own directory: holds `zoo.cfg`, `zookeeper.log` and any logging config. */
  serverDir: string;
  /** Removed by the reaper with the server if this process dies (the server's or ensemble's dir). */
  cleanupDir: string;
  jvmOptions: readonly string[];
  logLevel: ZooKeeperLogLevel;
  /** Extra `-D` system properties. */
  systemProperties?: Readonly<Record<string, string>>;
}

/** How the JVM ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running (or ended) ZooKeeper JVM. */
export interface ServerProcess {
  readonly pid: number;
  /** Resolves when the JVM has exited. */
  readonly exit: Promise<ProcessExit>;
  readonly exited: boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the JVM has exited. Idempotent. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of `zookeeper.log`. */
  logTail(lines?: number): string;
}

/**
 * Spawns `QuorumPeerMain <serverDir>/zoo.cfg` with its output in `<serverDir>/zookeeper.log`.
 *
 * ## Example
 *
 * ```ts
 * const jvm = launchServer({ installation, serverDir, cleanupDir: serverDir, jvmOptions: DEFAULT_JVM_OPTIONS, logLevel: 'warn' });
 * await waitUntilServing(jvm, { hostPort: '127.0.0.1:2181', dataDir, modes: ['standalone'], timeoutMs: 30_000 });
 * ```
 *
 * @param options What to launch.
 * @return The process, already guarded by the reaper.
 */
export function launchServer(options: LaunchOptions): ServerProcess {
  const { installation, serverDir, logLevel } = options;
  const logFile = join(serverDir, 'zookeeper.log');
  const properties: Record<string, string> = {
    'zookeeper.admin.enableServer': 'false',
    'zookeeper.jmx.log4j.disable': 'true',
    ...loggingProperties(installation, serverDir, logLevel),
    ...options.systemProperties,
  };
  const args = [
    ...options.jvmOptions,
    ...Object.entries(properties).map(([key, value]) => `-D${key}=${value}`),
    '-cp',
    installation.classpath.join(':'),
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    join(serverDir, 'zoo.cfg'),
  ];
  const logFd = openSync(logFile, 'a');
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(installation.java, args, {
      cwd: serverDir,
      stdio: ['ignore', logFd, logFd],
    });
  } finally {
    closeSync(logFd);
  }
  // A forgotten server must not keep Node alive: the reaper kills it when Node exits.
  child.unref();

  let exited = false;
  let ticket: ReaperTicket | undefined;
  const exit = new Promise<ProcessExit>((resolve) => {
    child.once('error', (error) => {
      exited = true;
      writeFileSync(logFile, `\n[zkrx] failed to spawn ${installation.java}: ${error.message}\n`, {
        flag: 'a',
      });
      ticket?.release();
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => {
      exited = true;
      ticket?.release();
      resolve({ code, signal });
    });
  });
  if (child.pid !== undefined) ticket = trackServerProcess(child.pid, options.cleanupDir);

  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    exit,
    get exited() {
      return exited;
    },
    stop(graceMs = 3_000) {
      stopping ??= (async () => {
        if (exited) return;
        child.ref(); // keep Node alive until the JVM is really gone
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exit;
        clearTimeout(killer);
        child.unref();
      })();
      return stopping;
    },
    logTail(lines = 30) {
      return readLogTail(logFile, lines);
    },
  };
}

/** What {@link waitUntilServing} waits for. */
export interface ServingCondition {
  hostPort: string;
  /** The server's dataDir: `conf` must report it, so a stranger on the same port is not taken for ours. */
  dataDir: string;
  /**
   * Acceptable `Mode:`s of `srvr`: `standalone`, or `leader` / `follower` in an ensemble
   * (`read-only` for a member cut off from its quorum); `answering`: any, even none (the server
   * runs and answers four-letter words, serving or not).
   */
  modes: readonly string[] | 'answering';
  timeoutMs: number;
}

/**
 * Waits until the server answers `ruok` with `imok` AND `srvr` shows an accepted `Mode:`
 * (`imok` comes before the server serves), then checks with `conf` that it is this server.
 *
 * ## Example
 *
 * ```ts
 * await waitUntilServing(jvm, { hostPort, dataDir, modes: ['leader', 'follower'], timeoutMs: 30_000 });
 * ```
 *
 * @param jvm The process expected to serve; its early exit fails the wait.
 * @param condition Where and what to wait for.
 * @return Resolves when serving; rejects with a {@link ZooKeeperStartError} (JVM killed) otherwise.
 */
export async function waitUntilServing(
  jvm: ServerProcess,
  condition: ServingCondition,
): Promise<void> {
  const deadline = Date.now() + condition.timeoutMs;
  while (Date.now() < deadline) {
    if (jvm.exited) {
      const { code, signal } = await jvm.exit;
      const logTail = jvm.logTail();
      throw new ZooKeeperStartError(
        `ZooKeeper for ${condition.hostPort} exited before serving (${signal ?? `exit code ${code}`}).`,
        { logTail, exitCode: code, bindFailed: isBindFailure(logTail) },
      );
    }
    if (await isServing(condition)) {
      const conf = await fourLetterWord(condition.hostPort, 'conf', 2_000).catch(() => '');
      if (conf.includes(`dataDir=${condition.dataDir}`)) return;
      if (/dataDir=/.test(conf)) {
        await jvm.stop();
        throw new ZooKeeperStartError(
          `Another ZooKeeper answers on ${condition.hostPort} (its ${/dataDir=.*/.exec(conf)?.[0]}).`,
          { logTail: jvm.logTail(), exitCode: null, bindFailed: true },
        );
      }
    }
    await sleep(100);
  }
  await jvm.stop();
  throw new ZooKeeperStartError(
    `ZooKeeper for ${condition.hostPort} did not serve within ${condition.timeoutMs} ms.`,
    { logTail: jvm.logTail(), exitCode: null },
  );
}

async function isServing(condition: ServingCondition): Promise<boolean> {
  try {
    if ((await fourLetterWord(condition.hostPort, 'ruok', 1_000)) !== 'imok') return false;
    if (condition.modes === 'answering') return true;
    const mode = parseServerMode(await fourLetterWord(condition.hostPort, 'srvr', 1_000));
    return mode !== undefined && condition.modes.includes(mode);
  } catch {
    return false;
  }
}

/**
 * Returns the last `lines` lines of a log file, or a note when it cannot be read.
 *
 * @param file The log file.
 * @param lines How many lines.
 * @return The tail.
 */
export function readLogTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch (error) {
    return `(no log: ${(error as Error).message})`;
  }
}

/** Whether a server log says a port could not be bound. */
export function isBindFailure(log: string): boolean {
  return /BindException|Address already in use/.test(log);
}

function loggingProperties(
  installation: ZooKeeperInstallation,
  serverDir: string,
  level: ZooKeeperLogLevel,
): Record<string, string> {
  switch (installation.logging) {
    case 'slf4j-simple':
      return {
        'org.slf4j.simpleLogger.defaultLogLevel': level,
        'org.slf4j.simpleLogger.showDateTime': 'true',
        'org.slf4j.simpleLogger.dateTimeFormat': 'HH:mm:ss.SSS',
      };
    case 'logback': {
      const file = join(serverDir, 'logback.xml');
      writeFileSync(
        file,
        [
          '<configuration>',
          '  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">',
          '    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger - %msg%n</pattern></encoder>',
          '  </appender>',
          `  <root level="${level.toUpperCase()}"><appender-ref ref="OUT"/></root>`,
          '</configuration>',
          '',
        ].join('\n'),
      );
      return { 'logback.configurationFile': file };
    }
    case 'log4j': {
      const file = join(serverDir, 'log4j.properties');
      writeFileSync(
        file,
        [
          `log4j.rootLogger=${level.toUpperCase()}, OUT`,
          'log4j.appender.OUT=org.apache.log4j.ConsoleAppender',
          'log4j.appender.OUT.layout=org.apache.log4j.PatternLayout',
          'log4j.appender.OUT.layout.ConversionPattern=%d{HH:mm:ss.SSS} [%t] %-5p %c - %m%n',
          '',
        ].join('\n'),
      );
      return { 'log4j.configuration': `file:${file}` };
    }
    default:
      return {};
  }
}
