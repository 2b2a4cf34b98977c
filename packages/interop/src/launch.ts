/**
 * The command line of a peer: the Java peer compiled once into a cache (or run by the
 * single-file launcher), the Python peer with the kazoo interpreter.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type InteropLocations, interopLocations, peerAvailability } from './availability';
import { InteropUnavailableError, type PeerKind } from './errors';

const run = promisify(execFile);

/** The Java peer's source (one file, runnable by `java -cp <classpath> InteropPeer.java`). */
export const JAVA_PEER_SOURCE = fileURLToPath(new URL('../java/InteropPeer.java', import.meta.url));
/** The Python peer's source (run by the kazoo python). */
export const PYTHON_PEER_SOURCE = fileURLToPath(
  new URL('../python/interop_peer.py', import.meta.url),
);

/** Small, quick-starting JVM: the peer holds a few locks and answers lines. */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx256m'];

export interface PeerCommandOptions {
  /** ZooKeeper connect string for the peer's sessions. */
  connectString: string;
  /** Session timeout of the peer's sessions (default 4000 ms). */
  sessionTimeoutMs?: number;
  /** Where java, the jars and python are (from the environment by default). */
  locations?: InteropLocations;
  /**
   * Java only: `compiled` (default) compiles InteropPeer.java once with javac into a cache
   * under the temp dir and runs the class (≈0.3 s a start); `source` uses the single-file
   * launcher (compiles on every start, ≈1 s). `compiled` falls back to `source` without javac.
   */
  javaMode?: 'compiled' | 'source';
}

/** A program and its arguments. */
export interface PeerCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The command that starts a peer (for `startPeer`, or to run one by hand).
 *
 * ## Example
 * ```ts
 * const { command, args } = await peerCommand('kazoo', { connectString: '127.0.0.1:2181' });
 * console.log(command, args.at(-4));
 * // Output: /usr/bin/python3 --connect
 * ```
 *
 * @param kind Which peer.
 * @param options The server and where the runtimes are.
 * @return The program and its arguments; rejects with InteropUnavailableError when it cannot run.
 */
export async function peerCommand(
  kind: PeerKind,
  options: PeerCommandOptions,
): Promise<PeerCommand> {
  const locations = options.locations ?? interopLocations();
  const support = peerAvailability(locations)[kind];
  if (!support.available) throw new InteropUnavailableError(kind, support.reason);
  const peerArgs = [
    '--connect',
    options.connectString,
    '--session-timeout-ms',
    String(options.sessionTimeoutMs ?? 4_000),
  ];
  if (kind === 'kazoo') {
    return { command: locations.python, args: [PYTHON_PEER_SOURCE, ...peerArgs] };
  }
  const classes = options.javaMode === 'source' ? undefined : await compiledJavaPeer(locations);
  const args = classes
    ? [...JVM_FLAGS, '-cp', `${classes}${delimiter}${locations.curatorClasspath}`, 'InteropPeer']
    : [...JVM_FLAGS, '-cp', locations.curatorClasspath, JAVA_PEER_SOURCE];
  return { command: locations.java, args: [...args, ...peerArgs] };
}

const compilations = new Map<string, Promise<string | undefined>>();

/**
 * Compiles InteropPeer.java once (per source, classpath and JDK) into
 * `$TMPDIR/zkrx-interop/InteropPeer-<hash>/`, shared by every test process; the directory
 * appears atomically, so concurrent first runs are safe.
 *
 * @return The directory of the classes, or undefined when javac is missing or fails (the
 *   single-file launcher is used then, and reports any compile error itself).
 */
export function compiledJavaPeer(locations: InteropLocations): Promise<string | undefined> {
  const source = readFileSync(JAVA_PEER_SOURCE);
  const hash = createHash('sha256')
    .update(source)
    .update('\0')
    .update(locations.curatorClasspath)
    .update('\0')
    .update(locations.javac)
    .digest('hex')
    .slice(0, 16);
  let compilation = compilations.get(hash);
  if (!compilation) {
    compilation = compile(locations, hash);
    compilations.set(hash, compilation);
  }
  return compilation;
}

async function compile(locations: InteropLocations, hash: string): Promise<string | undefined> {
  const cacheRoot = join(tmpdir(), 'zkrx-interop');
  const target = join(cacheRoot, `InteropPeer-${hash}`);
  if (existsSync(join(target, 'InteropPeer.class'))) return target;
  mkdirSync(cacheRoot, { recursive: true });
  const staging = mkdtempSync(join(cacheRoot, 'staging-'));
  try {
    await run(
      locations.javac,
      ['-nowarn', '-d', staging, '-cp', locations.curatorClasspath, JAVA_PEER_SOURCE],
      { timeout: 120_000 },
    );
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process finished first: use its classes.
      if (!existsSync(join(target, 'InteropPeer.class'))) throw error;
    }
    return target;
  } catch {
    return undefined;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
