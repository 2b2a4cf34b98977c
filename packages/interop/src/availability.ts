/**
 * Where the peers' runtimes are (Java + Debian's Curator jars, a Python with kazoo) and whether
 * each peer can run here, with the reason when not, for `describe.skipIf`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { PeerKind } from './errors';

/**
 * Jars of Curator 5.x and its ZooKeeper client, as Debian installs them in /usr/share/java. The
 * only list: @zkrx/bench's Java floor and scripts/side-by-side.sh take their class path from
 * {@link interopLocations} too.
 */
export const CURATOR_JARS = [
  'curator-recipes',
  'curator-framework',
  'curator-client',
  'zookeeper',
  'zookeeper-jute',
  'guava',
  'slf4j-api',
  'slf4j-nop',
  'netty-buffer',
  'netty-codec',
  'netty-common',
  'netty-handler',
  'netty-resolver',
  'netty-transport',
  'netty-transport-native-epoll',
  'netty-transport-native-unix-common',
] as const;

/** The Java release InteropPeer.java needs (records, switch expressions, pattern matching). */
export const MIN_JAVA_RELEASE = 17;

/** The programs and files the peers run with. Every field can be set by an environment variable. */
export interface InteropLocations {
  /** `ZKRX_JAVA`, else `$JAVA_HOME/bin/java`, else `java` on PATH. */
  readonly java: string;
  /** `ZKRX_JAVAC`, else javac beside `java` (used to compile the peer once; optional). */
  readonly javac: string;
  /** `ZKRX_CURATOR_CLASSPATH`, else the Debian jars of {@link CURATOR_JARS} in /usr/share/java. */
  readonly curatorClasspath: string;
  /** `ZKRX_KAZOO_PYTHON`, else `/usr/bin/python3` (Debian's, with python3-kazoo). */
  readonly python: string;
}

/**
 * The locations from the environment, or Debian's defaults.
 *
 * ## Example
 * ```ts
 * console.log(interopLocations().python);
 * // Output: /usr/bin/python3
 * ```
 *
 * @param env The environment to read (process.env by default).
 * @return Where java, javac, the Curator classpath and the kazoo python are.
 */
export function interopLocations(env: NodeJS.ProcessEnv = process.env): InteropLocations {
  const java =
    env.ZKRX_JAVA || (env.JAVA_HOME ? join(env.JAVA_HOME, 'bin', 'java') : undefined) || 'java';
  const javac =
    env.ZKRX_JAVAC || (java.includes('/') ? join(dirname(java), 'javac') : undefined) || 'javac';
  const curatorClasspath =
    env.ZKRX_CURATOR_CLASSPATH ||
    CURATOR_JARS.map((jar) => join('/usr/share/java', `${jar}.jar`)).join(delimiter);
  const python = env.ZKRX_KAZOO_PYTHON || '/usr/bin/python3';
  return { java, javac, curatorClasspath, python };
}

/** Whether one peer can run here. */
export type PeerSupport =
  | { readonly available: true; readonly reason?: undefined; readonly detail: string }
  | { readonly available: false; readonly reason: string };

/** Which peers can run here, and why not. */
export type PeerAvailability = Readonly<Record<PeerKind, PeerSupport>>;

const cache = new Map<string, PeerAvailability>();

/**
 * Checks once per process which peers can run here: Java ≥ 17 and every Curator jar for
 * `curator`, a Python that imports kazoo for `kazoo`. Synchronous, for `describe.skipIf`.
 *
 * ## Example
 * ```ts
 * const { curator } = peerAvailability();
 * describe.skipIf(!curator.available)(`Curator interop${curator.reason ? ` (skipped: ${curator.reason})` : ''}`, () => {});
 * console.log(curator.available);
 * // Output: true
 * ```
 *
 * @param locations Where to look (from the environment by default).
 * @return For each peer, `available`, and the `reason` when it is not.
 */
export function peerAvailability(
  locations: InteropLocations = interopLocations(),
): PeerAvailability {
  const key = JSON.stringify(locations);
  let result = cache.get(key);
  if (!result) {
    result = { curator: checkCurator(locations), kazoo: checkKazoo(locations) };
    cache.set(key, result);
  }
  return result;
}

function checkCurator(locations: InteropLocations): PeerSupport {
  const missing = locations.curatorClasspath
    .split(delimiter)
    .filter((entry) => entry !== '' && !existsSync(entry));
  if (missing.length > 0) {
    return {
      available: false,
      reason: `Curator jars missing: ${missing.join(', ')} (apt-get install libcurator-recipes-java libslf4j-java, or set ZKRX_CURATOR_CLASSPATH)`,
    };
  }
  const probe = spawnSync(locations.java, ['-version'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.error || probe.status !== 0) {
    const why = probe.error ? probe.error.message : `exit ${probe.status}: ${probe.stderr.trim()}`;
    return {
      available: false,
      reason: `${locations.java} -version failed (${why}); install a JDK >= ${MIN_JAVA_RELEASE} or set ZKRX_JAVA / JAVA_HOME`,
    };
  }
  const version = /version "([^"]+)"/.exec(probe.stderr)?.[1] ?? 'unknown';
  const release = Number(/^(?:1\.)?(\d+)/.exec(version)?.[1]);
  if (!(release >= MIN_JAVA_RELEASE)) {
    return {
      available: false,
      reason: `${locations.java} is Java ${version}; the Curator peer needs Java >= ${MIN_JAVA_RELEASE}`,
    };
  }
  return { available: true, detail: `Java ${version}` };
}

function checkKazoo(locations: InteropLocations): PeerSupport {
  if (locations.python.includes('/') && !existsSync(locations.python)) {
    return {
      available: false,
      reason: `${locations.python} not found (install python3 and python3-kazoo, or set ZKRX_KAZOO_PYTHON)`,
    };
  }
  const probe = spawnSync(
    locations.python,
    ['-c', 'import sys, kazoo.version; print(kazoo.version.__version__, sys.version.split()[0])'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (probe.error || probe.status !== 0) {
    const lastLine = probe.stderr?.trim().split('\n').pop();
    const why = probe.error ? probe.error.message : `exit ${probe.status}: ${lastLine}`;
    return {
      available: false,
      reason: `${locations.python} cannot import kazoo (${why}); install python3-kazoo or set ZKRX_KAZOO_PYTHON`,
    };
  }
  const [kazoo, python] = probe.stdout.trim().split(' ');
  return { available: true, detail: `kazoo ${kazoo} on Python ${python}` };
}
