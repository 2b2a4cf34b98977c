/**
 * Typed errors of @zkrx/testing: an option is wrong, ZooKeeper (or Java) is not installed, or a
 * server did not start. Each has a stable `code` and `name`, and a static `isInstance` that
 * recognises it across copies of the package (its ESM and CommonJS builds); `instanceof` answers
 * the same.
 *
 * They follow @zkrx/core's `ZkrxError` convention without importing it (core's tests depend on
 * this package: a dependency back would be a cycle): the same `Symbol.for` keys
 * (`zkrx.error:<package>.<class>`), the base's key included, so `ZkrxError.isInstance` from
 * @zkrx/core recognises these errors too, and a `code`. Core's `zkrx-error.test.ts` checks that
 * the two stay in step.
 */

/** The `Symbol.for` key of a class's mark, as @zkrx/core's `ZkrxError` makes it. */
const markOf = (marker: string): symbol => Symbol.for(`zkrx.error:${marker}`);

/**
 * This package's stand-in for @zkrx/core's `ZkrxError`: an error is marked with the base's key
 * (`@zkrx/core.ZkrxError`, so `ZkrxError.isInstance` knows it) and its own class's, which
 * `isInstance` and `instanceof` look for. (Its classes are not meant to be extended.)
 */
abstract class TestingError<Code extends string> extends Error {
  protected static readonly marker: string = '@zkrx/core.ZkrxError';
  declare static readonly isInstance: (value: unknown) => boolean;

  static {
    // `X.isInstance` looks for X's mark, called on X or unbound.
    Object.defineProperty(TestingError, 'isInstance', {
      get(this: typeof TestingError) {
        const key = markOf(this.marker);
        return (value: unknown) => typeof value === 'object' && value !== null && key in value;
      },
    });
  }

  /** What went wrong, stable across releases. */
  readonly code: Code;

  constructor(code: Code, message: string) {
    super(message);
    this.code = code;
    const own = (new.target as typeof TestingError).marker;
    for (const marker of [TestingError.marker, own]) {
      Object.defineProperty(this, markOf(marker), { value: true });
    }
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `instanceof` calls it on the class it asks about
    return this.isInstance(value);
  }
}

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
export class ZooKeeperNotFoundError extends TestingError<'ZooKeeperNotFound'> {
  protected static override readonly marker = '@zkrx/testing.ZooKeeperNotFoundError';
  declare static readonly isInstance: (value: unknown) => value is ZooKeeperNotFoundError;
  override readonly name = 'ZooKeeperNotFoundError';
  /** The places that were looked at, in order. */
  readonly searched: readonly string[];

  /**
   * @param reason What is missing, one sentence.
   * @param searched The places that were looked at, in order.
   */
  constructor(reason: string, searched: readonly string[]) {
    super('ZooKeeperNotFound', `${reason}\nSearched: ${searched.join('; ')}.\n${INSTALL_HINT}`);
    this.searched = searched;
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
export class ZooKeeperStartError extends TestingError<'ZooKeeperStartFailed'> {
  protected static override readonly marker = '@zkrx/testing.ZooKeeperStartError';
  declare static readonly isInstance: (value: unknown) => value is ZooKeeperStartError;
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
    super(
      'ZooKeeperStartFailed',
      `${message}\n--- last lines of the server log ---\n${details.logTail}`,
    );
    this.logTail = details.logTail;
    this.exitCode = details.exitCode;
    this.bindFailed = details.bindFailed ?? false;
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
export class InvalidOptionError extends TestingError<'InvalidOption'> {
  protected static override readonly marker = '@zkrx/testing.InvalidOptionError';
  declare static readonly isInstance: (value: unknown) => value is InvalidOptionError;
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
      'InvalidOption',
      unknown
        ? `${functionName}: unknown option ${option}; ${expected}`
        : `${functionName}: option ${option} must be ${expected}, got ${received}`,
    );
    this.functionName = functionName;
    this.option = option;
    this.expected = expected;
    this.received = received;
  }
}

/**
 * Thrown when ZooKeeper refuses to read or change an ensemble's configuration (`reconfig`): the
 * server's KeeperException code is `rc` (e.g. -123 `ReconfigDisabled`, -8 `BadArguments`).
 *
 * ## Example
 *
 * ```ts
 * try {
 *   await ensemble.removeServer(0);
 * } catch (error) {
 *   if (ReconfigurationError.isInstance(error)) console.log(error.rc);
 * }
 * // Output: -123
 * ```
 */
export class ReconfigurationError extends TestingError<'ReconfigurationFailed'> {
  protected static override readonly marker = '@zkrx/testing.ReconfigurationError';
  declare static readonly isInstance: (value: unknown) => value is ReconfigurationError;
  override readonly name = 'ReconfigurationError';
  /** ZooKeeper's return code (a KeeperException code, negative). */
  readonly rc: number;

  /**
   * @param message What was asked, one sentence; the code is appended.
   * @param rc The server's return code.
   */
  constructor(message: string, rc: number) {
    super('ReconfigurationFailed', `${message}: ZooKeeper error code ${rc}`);
    this.rc = rc;
  }
}
