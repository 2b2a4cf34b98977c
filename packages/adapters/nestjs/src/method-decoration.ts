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

/**
 * Has Nest set `instance[key]` to the provider `token` on every instance of the decorated class
 * (property injection): decorated methods find the application's module through `this`, so two
 * applications in one process each use their own. `onInjected` is told of each instance as Nest
 * makes it (before any lifecycle hook runs).
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
  if (!onInjected) return;
  // Nest assigns `instance[key] = value`: a setter on the prototype sees it, then keeps the
  // value on the instance itself.
  Object.defineProperty(prototype, key, {
    configurable: true,
    enumerable: false,
    get: () => undefined,
    set(this: object, value: T) {
      Object.defineProperty(this, key, { value, writable: true, configurable: true });
      onInjected(this, value);
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
  replaceMethod(descriptor, wrap({ original, where, serviceOf }));
}

/** What an instance of a class with @Locked or @LeaderOnly methods needs, for messages. */
export const NEEDS_ZK_MODULE =
  'that imports ZkModule: import ZkModule.forRoot({ ..., isGlobal: true }) and let Nest create the class';
