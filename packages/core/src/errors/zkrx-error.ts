/**
 * ZkrxError, the base of every error zkrx throws (ZooKeeper's, the recipes', the CLI's): a
 * `code`, the `cause` kept, and an identity that survives two copies of a package in one process.
 */

/** The options every zkrx error takes. */
export interface ZkrxErrorOptions {
  /** What caused it (kept as the standard `cause`). */
  cause?: unknown;
}

/** Each marker's `Symbol.for` key, looked up once (the global registry is a string lookup). */
const markerSymbols = new Map<string, symbol>();

function markerSymbol(marker: string): symbol {
  let symbol = markerSymbols.get(marker);
  if (symbol === undefined) {
    symbol = Symbol.for(`zkrx.error:${marker}`);
    markerSymbols.set(marker, symbol);
  }
  return symbol;
}

/** Each class's marks: the keys of its own marker and of every class above it that declares one. */
const classMarks = new WeakMap<Function, readonly symbol[]>();

function marksOf(type: Function): readonly symbol[] {
  let marks = classMarks.get(type);
  if (marks === undefined) {
    const found: symbol[] = [];
    for (
      let each: unknown = type;
      typeof each === 'function' && each !== Error;
      each = Object.getPrototypeOf(each)
    ) {
      const marker = ownMarker(each);
      if (marker !== undefined) found.push(markerSymbol(marker));
    }
    marks = found;
    classMarks.set(type, marks);
  }
  return marks;
}

function hasMark(value: unknown, marker: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[markerSymbol(marker)] === true
  );
}

/** The marker a class declares itself (not one it inherits), if any. */
function ownMarker(type: Function): string | undefined {
  return Object.hasOwn(type, 'marker') ? (type as unknown as { marker: string }).marker : undefined;
}

/**
 * `value instanceof type`, across copies: by the mark of the class when it declares a marker,
 * else the ordinary way (the prototype chain: a subclass someone made without a marker).
 */
function isOfClass(type: Function, value: unknown): boolean {
  const marker = ownMarker(type);
  return marker === undefined
    ? Function.prototype[Symbol.hasInstance].call(type, value)
    : hasMark(value, marker);
}

/** Each class's `isInstance`: {@link isOfClass} bound to it, made once. */
const recognisers = new WeakMap<Function, (value: unknown) => boolean>();

function recogniserOf(type: Function): (value: unknown) => boolean {
  let recognise = recognisers.get(type);
  if (recognise === undefined) {
    recognise = (value) => isOfClass(type, value);
    recognisers.set(type, recognise);
  }
  return recognise;
}

/**
 * The base of every zkrx error: a stable `code` to branch on, the `cause` kept, and a static
 * `isInstance` that recognises an error whichever copy of its package made it.
 *
 * An application can load two copies of a package — its ESM and CommonJS builds (a NestJS app
 * `require`s, a dependency `import`s), or two versions — and `instanceof` against one copy's
 * class fails for the other's errors. So each class names itself with a `marker`
 * (`<package>.<class>`), the constructor marks the error with a `Symbol.for` key for its class
 * and each class above it (keys every copy shares), and `isInstance` (and `instanceof`) look for
 * that key. Inside zkrx, errors are recognised only that way.
 *
 * A subclass declares its `marker`, its `name`, its code as the type argument, and (for the
 * type only) its `isInstance`: the base does the rest.
 *
 * ## Example
 * ```ts
 * class QuotaError extends ZkrxError<'Quota'> {
 *   protected static override readonly marker = '@my/app.QuotaError';
 *   declare static readonly isInstance: (value: unknown) => value is QuotaError;
 *   override readonly name = 'QuotaError';
 *   constructor(readonly tenant: string) {
 *     super('Quota', `tenant ${tenant} is over its quota`);
 *   }
 * }
 * const error: unknown = new QuotaError('acme');
 * console.log(ZkrxError.isInstance(error), QuotaError.isInstance(error), error instanceof QuotaError);
 * // Output: true true true
 * ```
 */
export class ZkrxError<Code extends string = string> extends Error {
  /**
   * The class's name across copies of its package, `<package>.<class>`: each subclass declares
   * its own (a subclass without one is recognised by `instanceof` the ordinary way).
   */
  protected static readonly marker: string = '@zkrx/core.ZkrxError';

  /**
   * True for an error of the class it is read from, made by any copy of its package in the
   * process: `ZkrxError.isInstance(e)` for any zkrx error (@zkrx/testing's included: it follows
   * the same convention without depending on this package), `LockLostError.isInstance(e)` for a
   * lost lock. Works unbound too: `errors.filter(LockLostError.isInstance)`.
   */
  declare static readonly isInstance: (value: unknown) => value is ZkrxError;

  static {
    // One getter for every class: `X.isInstance` is X's own recogniser, bound to X.
    Object.defineProperty(ZkrxError, 'isInstance', {
      get(this: Function) {
        return recogniserOf(this);
      },
    });
  }

  override readonly name: string = 'ZkrxError';
  /** What went wrong, stable across releases: `NoNode`, `LockTimeout`, `BadUsage`... */
  readonly code: Code;

  /**
   * @param code What went wrong, stable across releases.
   * @param message For a person to read.
   * @param options `cause`: what caused it.
   */
  constructor(code: Code, message: string, options?: ZkrxErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // Mark the error for its class and every class above it that declares a marker (the keys
    // found once per class: errors are made on hot paths, a released lease's reason among them).
    for (const mark of marksOf(new.target)) {
      Object.defineProperty(this, mark, { value: true, enumerable: false });
    }
  }

  /** `instanceof` answers as `isInstance` does, across copies. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `instanceof` calls it on the class it asks about
    return isOfClass(this, value);
  }
}
