/**
 * Sessions of Apache's Java client that follow the ensemble as ZooKeeper's reconfiguration guide
 * asks (`java/EnsembleFollowers.java`), driven from Node: where they are, how often their
 * connection dropped. The comparison beside zkrx in a rolling replacement.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { locateZooKeeper } from '@zkrx/testing';

/**
 * The Java program's source (run by the single-file launcher): beside this file's package,
 * also when this file is bundled into another package's build (the bench's tools).
 */
export const JAVA_FOLLOWERS_SOURCE = ((): string => {
  const beside = fileURLToPath(new URL('../java/EnsembleFollowers.java', import.meta.url));
  if (existsSync(beside)) return beside;
  const manifest = createRequire(import.meta.url).resolve('@zkrx/interop/package.json');
  return join(dirname(manifest), 'java', 'EnsembleFollowers.java');
})();

/** Per session, in the order of `sessions`. */
export interface JavaFollowersReport {
  /** How often its connection dropped (Disconnected): each would end a lease that gives up on it. */
  readonly disconnects: readonly number[];
  readonly expired: readonly number[];
  /** How often it called `updateServerList`. */
  readonly updates: readonly number[];
}

/** The running sessions. */
export interface JavaFollowers {
  /** Their session ids (hex). */
  readonly sessions: readonly string[];
  report(): Promise<JavaFollowersReport>;
  close(): Promise<void>;
}

/**
 * Starts `count` Java sessions on `connectString`, each holding an ephemeral node under `path`
 * (which must exist), each following the configuration. Resolves once all are connected.
 *
 * ## Example
 * ```ts
 * const java = await startJavaFollowers({ connectString, count: 60, sessionTimeoutMs: 10_000, path: '/bench' });
 * console.log(java.sessions.length, (await java.report()).disconnects.every((n) => n === 0));
 * await java.close();
 * // Output: 60 true
 * ```
 */
export async function startJavaFollowers(options: {
  connectString: string;
  count: number;
  sessionTimeoutMs: number;
  path: string;
}): Promise<JavaFollowers> {
  const installation = locateZooKeeper();
  const child = spawn(
    installation.java,
    [
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Xmx256m',
      '-cp',
      installation.classpath.join(':'),
      JAVA_FOLLOWERS_SOURCE,
      options.connectString,
      String(options.count),
      String(options.sessionTimeoutMs),
      options.path,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  lines.on('line', (line) => {
    if (!line.startsWith('{')) return;
    waiting.shift()?.(JSON.parse(line) as Record<string, unknown>);
  });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      waiting.push(resolve);
      void exited.then(() =>
        reject(
          new Error(`the Java followers exited:\n${stderr.split('\n').slice(-20).join('\n')}`),
        ),
      );
    });
  const ready = await next();
  return {
    sessions: ready.sessions as string[],
    async report() {
      const answer = next();
      child.stdin.write('report\n');
      return (await answer) as unknown as JavaFollowersReport;
    },
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
