/**
 * Finds a ZooKeeper installation and a `java` to run it: ZOOKEEPER_HOME, Debian's jars, or
 * `zkServer.sh` on PATH, in that order. Synchronous and side-effect free apart from reading the disk.
 */
import { accessSync, constants, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { ZooKeeperNotFoundError } from './errors';
import { checkOptions, rule } from './options';

/** Which logging backend the installation's jars bring, so the server's log level can be set. */
export type ZooKeeperLogging = 'slf4j-simple' | 'logback' | 'log4j' | 'none';

/** A runnable ZooKeeper: the `java` binary and the class path of the server. */
export interface ZooKeeperInstallation {
  /** Absolute path of the `java` executable. */
  java: string;
  /** Class path entries (jars, and the upstream `conf` directory when present). */
  classpath: string[];
  /** Where the installation was found. */
  source: 'zookeeper-home' | 'debian' | 'path';
  /** The ZooKeeper home directory, when there is one (not for Debian's split layout). */
  home?: string;
  /** The logging backend found on the class path. */
  logging: ZooKeeperLogging;
}

/** Options of {@link locateZooKeeper}; a wrong one throws `InvalidOptionError`. */
export interface LocateZooKeeperOptions {
  /** An unpacked upstream release (`apache-zookeeper-3.8.x-bin`); wins over everything else. */
  zookeeperHome?: string;
  /** The environment to read `ZOOKEEPER_HOME`, `JAVA_HOME` and `PATH` from; `process.env` by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where Debian puts its jars; `/usr/share/java` by default. */
  debianJavaDir?: string;
}

const DEBIAN_JAVA_DIR = '/usr/share/java';

/**
 * Finds ZooKeeper and Java, or throws a {@link ZooKeeperNotFoundError} that says how to install them.
 *
 * Looks, in order, at `options.zookeeperHome` / `ZOOKEEPER_HOME` (upstream layout: `lib/*.jar` and
 * `*.jar`), Debian's `/usr/share/java/zookeeper.jar`, then `zkServer.sh` on PATH (its home is the
 * parent of its `bin`). An explicit home that holds no ZooKeeper jar is an error, not skipped.
 *
 * ## Example
 *
 * ```ts
 * const installation = locateZooKeeper();
 * console.log(installation.source, installation.java);
 * // Output: debian /usr/bin/java
 * ```
 *
 * @param options Where to look; see {@link LocateZooKeeperOptions}.
 * @return The `java` binary and the server class path.
 */
export function locateZooKeeper(options: LocateZooKeeperOptions = {}): ZooKeeperInstallation {
  checkOptions('locateZooKeeper', options, {
    zookeeperHome: rule.string,
    env: {
      expected: 'an object of environment variables (strings)',
      valid: (value) =>
        typeof value === 'object' &&
        value !== null &&
        Object.values(value).every((item) => item === undefined || typeof item === 'string'),
    },
    debianJavaDir: rule.string,
  });
  const env = options.env ?? process.env;
  const debianDir = options.debianJavaDir ?? DEBIAN_JAVA_DIR;
  const searched: string[] = [];
  const found = findServerJars(options, env, debianDir, searched);
  if (!found) {
    throw new ZooKeeperNotFoundError('ZooKeeper was not found.', searched);
  }
  const java = findJava(env, searched);
  if (!java) {
    throw new ZooKeeperNotFoundError(
      'ZooKeeper was found but no Java runtime: set JAVA_HOME or put `java` on PATH ' +
        '(sudo apt-get install -y default-jre-headless).',
      searched,
    );
  }
  return { ...found, java, logging: loggingOf(found.classpath) };
}

type FoundJars = Omit<ZooKeeperInstallation, 'java' | 'logging'>;

function findServerJars(
  options: LocateZooKeeperOptions,
  env: Readonly<Record<string, string | undefined>>,
  debianDir: string,
  searched: string[],
): FoundJars | undefined {
  const explicitHome = options.zookeeperHome ?? env.ZOOKEEPER_HOME;
  const origin = options.zookeeperHome ? 'zookeeperHome option' : 'ZOOKEEPER_HOME';
  if (explicitHome) {
    searched.push(`${origin}=${explicitHome}`);
    const classpath = upstreamClasspath(explicitHome);
    if (!classpath) {
      throw new ZooKeeperNotFoundError(
        `${origin}=${explicitHome} holds no ZooKeeper jar (expected lib/zookeeper-3.x.y.jar).`,
        searched,
      );
    }
    return { classpath, source: 'zookeeper-home', home: explicitHome };
  }
  searched.push('ZOOKEEPER_HOME (not set)');

  const debian = debianClasspath(debianDir);
  searched.push(join(debianDir, 'zookeeper.jar'));
  if (debian) return { classpath: debian, source: 'debian' };

  searched.push('zkServer.sh on PATH');
  for (const home of homesFromPath(env.PATH ?? '')) {
    const classpath = upstreamClasspath(home);
    if (classpath) return { classpath, source: 'path', home };
  }
  return undefined;
}

/**
 * Debian splits ZooKeeper into `/usr/share/java/zookeeper.jar` and friends. The jar's manifest
 * `Class-Path` names its dependencies (commons-io, slf4j-api, netty, jute...), which the JVM then
 * loads by itself, so only the server jar, jute and a logging binding need listing here;
 * jute and slf4j-api are listed anyway in case a repackaging trims the manifest.
 */
function debianClasspath(dir: string): string[] | undefined {
  const server = join(dir, 'zookeeper.jar');
  const jute = join(dir, 'zookeeper-jute.jar');
  if (!isFile(server) || !isFile(jute)) return undefined;
  // Netty's codec and resolver are missing from the manifest: the TLS port (Netty) needs them.
  const optional = [
    'slf4j-api.jar',
    'slf4j-simple.jar',
    'netty-codec.jar',
    'netty-resolver.jar',
  ].map((name) => join(dir, name));
  return [server, jute, ...optional.filter(isFile)];
}

/** Upstream release layout: every jar of `lib/` and of the home itself, plus `conf/` for logging. */
function upstreamClasspath(home: string): string[] | undefined {
  const jars = [...jarsIn(join(home, 'lib')), ...jarsIn(home)];
  if (!jars.some((jar) => /^zookeeper(-\d[^/]*)?\.jar$/.test(basename(jar)))) return undefined;
  const conf = join(home, 'conf');
  return isDirectory(conf) ? [...jars, conf] : jars;
}

/** `zkServer.sh` (or Homebrew's `zkServer`) on PATH: the home is the parent of its real `bin`. */
function homesFromPath(path: string): string[] {
  const homes: string[] = [];
  for (const entry of path.split(delimiter)) {
    if (!entry) continue;
    for (const name of ['zkServer.sh', 'zkServer']) {
      const script = join(entry, name);
      if (!isFile(script)) continue;
      const home = dirname(dirname(realpath(script)));
      homes.push(home, join(home, 'libexec'));
    }
  }
  return homes;
}

function findJava(
  env: Readonly<Record<string, string | undefined>>,
  searched: string[],
): string | undefined {
  if (env.JAVA_HOME) {
    const java = join(env.JAVA_HOME, 'bin', 'java');
    searched.push(`JAVA_HOME=${env.JAVA_HOME}`);
    if (isExecutable(java)) return java;
  }
  searched.push('java on PATH');
  for (const entry of (env.PATH ?? '').split(delimiter)) {
    if (!entry) continue;
    const java = join(entry, 'java');
    if (isExecutable(java)) return java;
  }
  return undefined;
}

function loggingOf(classpath: readonly string[]): ZooKeeperLogging {
  const names = classpath.map((entry) => basename(entry));
  if (names.some((name) => name.startsWith('slf4j-simple'))) return 'slf4j-simple';
  if (names.some((name) => name.startsWith('logback-classic'))) return 'logback';
  if (names.some((name) => name.startsWith('slf4j-log4j12') || name.startsWith('slf4j-reload4j'))) {
    return 'log4j';
  }
  return 'none';
}

function jarsIn(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => join(dir, name))
    .filter(isFile);
}

function realpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isExecutable(path: string): boolean {
  if (!isFile(path)) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
