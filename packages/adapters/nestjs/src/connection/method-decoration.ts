/**
 * What @Locked, @LeaderOnly and @ForEachOwnedItem share: replacing a method while keeping the
 * metadata other decorators put on it, and having Nest hand a service to the decorated instances.
 */
import { Inject } from '@nestjs/common';
import { ZkError, ZkErrorCode } from '@zkrx/core';

// biome-ignore lint/suspicious/noExplicitAny: a method of any signature
export type AnyMethod = (this: any, ...args: any[]) => any;

/**
 * Replaces `descriptor.value` by `wrapper`, copying every Reflect metadata entry of the original
 * function (what `@Cron`, `@Interval`, `SetMetadata` and the like store there) and its name, so
 * decorators applied before this one still see their metadata; those applied after it put theirs
 * on the wrapper directly.
 */
function replaceMethod(descriptor: PropertyDescriptor, wrapper: AnyMethod): void {
  const original = descriptor.value as AnyMethod;
  for (const key of Reflect.getOwnMetadataKeys(original)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
  }
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  descriptor.value = wrapper;
}

const injected = new WeakMap<object, Set<string | symbol>>();

/** A decorated method's hook, told of each instance Nest makes: where it resolves its arguments. */
type InstanceHook<T> = (instance: object, service: T) => void;

/** The instance hooks of the methods decorated on a prototype, by decoration key. */
const instanceHooks = new WeakMap<object, Map<symbol, InstanceHook<never>[]>>();

function addInstanceHook<T>(prototype: object, key: symbol, hook: InstanceHook<T>): void {
  let byKey = instanceHooks.get(prototype);
  if (!byKey) {
    byKey = new Map();
    instanceHooks.set(prototype, byKey);
  }
  byKey.set(key, [...(byKey.get(key) ?? []), hook as InstanceHook<never>]);
}

/** The hooks of `instance`'s class and the classes it extends, base classes first. */
function hooksOf<T>(instance: object, key: symbol): InstanceHook<T>[] {
  const found: InstanceHook<T>[] = [];
  for (let prototype = Object.getPrototypeOf(instance); prototype; ) {
    found.unshift(...((instanceHooks.get(prototype)?.get(key) ?? []) as InstanceHook<T>[]));
    prototype = Object.getPrototypeOf(prototype);
  }
  return found;
}

/**
 * Has Nest set `instance[key]` to the provider `token` on every instance of the decorated class
 * (property injection): decorated methods find the application's module through `this`, so two
 * applications in one process each use their own. `onInjected`, then the instance hooks of the
 * decorated methods, are told of each instance as Nest makes it (after its constructor, before
 * any lifecycle hook runs: a hook's error fails the application's start).
 */
function injectInto<T>(
  prototype: object,
  key: symbol,
  token: string | symbol | Function,
  onInjected?: (instance: object, value: T) => void,
): void {
  let keys = injected.get(prototype);
  if (!keys) {
    keys = new Set();
    injected.set(prototype, keys);
  }
  if (keys.has(key)) return;
  keys.add(key);
  Inject(token)(prototype, key);
  // Nest assigns `instance[key] = value`: a setter on the prototype sees it, then keeps the
  // value on the instance itself.
  Object.defineProperty(prototype, key, {
    configurable: true,
    enumerable: false,
    get: () => undefined,
    set(this: object, value: T) {
      Object.defineProperty(this, key, { value, writable: true, configurable: true });
      onInjected?.(this, value);
      for (const hook of hooksOf<T>(this, key)) hook(this, value);
    },
  });
}

/** `Class.method`, for error messages. */
function describeMethod(target: object, key: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor.name;
  return `${owner}.${String(key)}`;
}

/** A method decorator that needs a service of the application, as Nest injects it. */
export interface MethodDecoration<T> {
  /** `@Locked`, ...: for messages. */
  readonly decorator: string;
  /** Where Nest puts the service on each instance (a `Symbol.for` key). */
  readonly key: symbol;
  /** The service's injection token. */
  readonly token: string | symbol | Function;
  /** Told of each instance Nest makes, with its service (before any lifecycle hook runs). */
  readonly onInjected?: (instance: object, service: T) => void;
  /** What the application lacks when an instance has no service (the end of the message). */
  readonly needs: string;
}

/** The method a replacement wraps, and what it needs to find its instance's service. */
export interface DecoratedMethod<T> {
  /** The method as written. */
  readonly original: AnyMethod;
  /** `Class.method`, for messages. */
  readonly where: string;
  /**
   * The service Nest injected into `instance`, or ZkError `BadArguments` saying what is
   * missing (an instance made with `new`, or an application without the module).
   */
  serviceOf(instance: unknown): T;
  /**
   * Tells `hook` of each instance Nest makes, with its service, when the application starts:
   * where arguments given as functions of the instance are resolved (and checked: a hook's
   * error fails the start).
   */
  onInstance(hook: (instance: object, service: T) => void): void;
}

/**
 * Decorates an instance method: checks it is one (ZkError `BadArguments` naming it otherwise),
 * has Nest inject `decoration.token` into every instance, and replaces the method by what
 * `wrap` makes of it, keeping the metadata other decorators put on it.
 */
export function decorateMethod<T>(
  decoration: MethodDecoration<T>,
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
  wrap: (method: DecoratedMethod<T>) => AnyMethod,
): void {
  const where = describeMethod(target, key);
  if (typeof descriptor.value !== 'function' || typeof target === 'function') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${decoration.decorator} goes on an instance method (${where} is not one)`,
    );
  }
  const original: AnyMethod = descriptor.value;
  injectInto<T>(target, decoration.key, decoration.token, decoration.onInjected);
  const serviceOf = (instance: unknown): T => {
    const service =
      typeof instance === 'object' && instance !== null
        ? (instance as Record<symbol, T | undefined>)[decoration.key]
        : undefined;
    if (service === undefined) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `${where} is ${decoration.decorator}, but this instance was not made by a Nest application ${decoration.needs}`,
      );
    }
    return service;
  };
  const onInstance = (hook: InstanceHook<T>) => addInstanceHook(target, decoration.key, hook);
  replaceMethod(descriptor, wrap({ original, where, serviceOf, onInstance }));
}

/**
 * A decorator argument given as a function of the instance (configuration from an injected
 * service), resolved once per instance — when the application starts (`take`, from an instance
 * hook), or at its first use (`of`) for an instance made before the hook could run.
 */
export class PerInstance<T> {
  private readonly values = new WeakMap<object, T>();

  constructor(private readonly resolve: (instance: object) => T) {}

  /** Resolves the value of `instance` and keeps it. */
  take(instance: object): T {
    const value = this.resolve(instance);
    this.values.set(instance, value);
    return value;
  }

  /** The value of `instance`: kept at the start, else resolved now. */
  of(instance: object): T {
    return this.values.has(instance) ? (this.values.get(instance) as T) : this.take(instance);
  }
}

/** A decorator's options: an object (ZkError `BadArguments` naming the decorator otherwise). */
export function checkOptionsObject<T extends object>(decorator: string, options: T): T {
  if (typeof options !== 'object' || options === null) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${decorator}: options must be an object (or a function of the instance returning one), got ${String(options)}`,
    );
  }
  return options;
}

/** One of `choices` (the first when undefined), or ZkError `BadArguments` naming the option. */
export function checkChoice<T extends string>(
  decorator: string,
  name: string,
  value: unknown,
  choices: readonly [T, ...T[]],
): T {
  if (value === undefined) return choices[0];
  if (!choices.includes(value as T)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${decorator}: ${name} must be ${choices.map((choice) => `'${choice}'`).join(' or ')}, got ${String(value)}`,
    );
  }
  return value as T;
}

/** What an instance of a class with @Locked or @LeaderOnly methods needs, for messages. */
export const NEEDS_ZK_MODULE =
  'that imports ZkModule: import ZkModule.forRoot({ ..., isGlobal: true }) and let Nest create the class';
