/**
 * Typed errors of @zkrx/testing: an option is wrong, ZooKeeper (or Java) is not installed, or a
 * server did not start.
 * Each has a stable `name`, and a static `isInstance` that recognises it across copies of the
 * package (its ESM and CommonJS builds); `instanceof` answers the same. (This package has no
 * runtime dependency, so it marks its errors itself, as @zkrx/core's `errorIdentity` does.)
 */

/** Marks instances with a `Symbol.for` key, shared by every copy of the package. */
function identity(name: string) {
  const marker = Symbol.for(`zkrx.error:@zkrx/testing.${name}`);
  return {
    mark: (error: Error) => Object.defineProperty(error, marker, { value: true }),
    is: (value: unknown) =>
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[marker] === true,
  };
}

const notFound = identity('ZooKeeperNotFoundError');
const startFailed = identity('ZooKeeperStartError');
const badOption = identity('InvalidOptionError');

/** How to get a ZooKeeper this package can run; part of every {@link ZooKeeperNotFoundError}. */
export const INSTALL_HINT = [
  'Install ZooKeeper 3.8 with one of:',
  '  - Debian/Ubuntu: sudo apt-get install -y zookeeper   (brings a Java runtime too)',
  '  - any OS: download apache-zookeeper-3.8.x-bin.tar.gz from https://zookeeper.apache.org/releases.html,',
  '    unpack it and set ZOOKEEPER_HOME=/path/to/apache-zookeeper-3.8.x-bin (needs Java 11+: JAVA_HOME or `java` on PATH)',
].join('\n');

/**
 * Thrown when no ZooKeeper installation (or no `java`) can be found; the message says how to install one.
 *
 * ## Example
 *
 * ```ts
 * try {
 *   await startZooKeeper();
 * } catch (error) {
 *   if (ZooKeeperNotFoundError.isInstance(error)) console.log(error.searched);
 * }
 * // Output: [ 'ZOOKEEPER_HOME (not set)', '/usr/share/java/zookeeper.jar', 'zkServer.sh on PATH' ]
 * ```
 */
export class ZooKeeperNotFoundError extends Error {
  override readonly name = 'ZooKeeperNotFoundError';
  /** The places that were looked at, in order. */
  readonly searched: readonly string[];

  /**
   * @param reason What is missing, one sentence.
   * @param searched The places that were looked at, in order.
   */
  constructor(reason: string, searched: readonly string[]) {
    super(`${reason}\nSearched: ${searched.join('; ')}.\n${INSTALL_HINT}`);
    this.searched = searched;
    notFound.mark(this);
  }

  /** True for a ZooKeeperNotFoundError from any copy of @zkrx/testing in the process. */
  static isInstance(value: unknown): value is ZooKeeperNotFoundError {
    return notFound.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return notFound.is(value);
  }
}

/**
 * Thrown when a ZooKeeper server exits before serving, or does not serve in time; carries its log tail.
 *
 * ## Example
 *
 * ```ts
 * try {
 *   await startZooKeeper({ extraConfig: { tickTime: 'soon' } });
 * } catch (error) {
 *   if (ZooKeeperStartError.isInstance(error)) console.log(error.exitCode, error.logTail);
 * }
 * // Output: 1 '... NumberFormatException: For input string: "soon" ...'
 * ```
 */
export class ZooKeeperStartError extends Error {
  override readonly name = 'ZooKeeperStartError';
  /** The last lines of the server's log (stdout and stderr of the JVM). */
  readonly logTail: string;
  /** The JVM's exit code, `null` if it was killed by a signal or was still running (timeout). */
  readonly exitCode: number | null;
  /** Whether the log says the server could not bind one of its ports. */
  readonly bindFailed: boolean;

  /**
   * @param message What went wrong, one sentence; the log tail is appended.
   * @param details The log tail, the exit code and whether a port could not be bound.
   */
  constructor(
    message: string,
    details: { logTail: string; exitCode: number | null; bindFailed?: boolean },
  ) {
    super(`${message}\n--- last lines of the server log ---\n${details.logTail}`);
    this.logTail = details.logTail;
    this.exitCode = details.exitCode;
    this.bindFailed = details.bindFailed ?? false;
    startFailed.mark(this);
  }

  /** True for a ZooKeeperStartError from any copy of @zkrx/testing in the process. */
  static isInstance(value: unknown): value is ZooKeeperStartError {
    return startFailed.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return startFailed.is(value);
  }
}

/**
 * Thrown when an option of a function of this package has the wrong type or value, or is not
 * one it takes — before anything starts (no process, no temporary directory, no socket).
 *
 * ## Example
 *
 * ```ts
 * try {
 *   await startZooKeeper({ tls: true });
 * } catch (error) {
 *   if (InvalidOptionError.isInstance(error)) console.log(error.option, '|', error.expected);
 * }
 * // Output: tls | an object { certificate, privateKey, ca?, clientAuth? } (PEM strings, e.g. createTestCertificates().server)
 * ```
 */
export class InvalidOptionError extends Error {
  override readonly name = 'InvalidOptionError';
  /** The function the options were given to, e.g. `startZooKeeper`. */
  readonly functionName: string;
  /** The option, dotted when nested (`tls.clientAuth`), `options` for the argument itself. */
  readonly option: string;
  /** What it expects: a type, values, or for an unknown option the options there are. */
  readonly expected: string;
  /** What it got, in short (`true`, `"2181"`, `an array`...). */
  readonly received: string;

  /**
   * @param functionName The function the options were given to.
   * @param option The option, dotted when nested.
   * @param expected What it expects.
   * @param received What it got, in short.
   * @param unknown Whether no such option exists (the message says so).
   */
  constructor(
    functionName: string,
    option: string,
    expected: string,
    received: string,
    unknown = false,
  ) {
    super(
      unknown
        ? `${functionName}: unknown option ${option}; ${expected}`
        : `${functionName}: option ${option} must be ${expected}, got ${received}`,
    );
    this.functionName = functionName;
    this.option = option;
    this.expected = expected;
    this.received = received;
    badOption.mark(this);
  }

  /** True for an InvalidOptionError from any copy of @zkrx/testing in the process. */
  static isInstance(value: unknown): value is InvalidOptionError {
    return badOption.is(value);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return badOption.is(value);
  }
}
