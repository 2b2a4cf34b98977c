/**
 * What @Locked and @LeaderOnly share: replacing a method while keeping the metadata other
 * decorators put on it, and having Nest hand the module's services to the decorated instances.
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
export function replaceMethod(descriptor: PropertyDescriptor, wrapper: AnyMethod): void {
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
export function injectInto<T>(
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
export function describeMethod(target: object, key: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor.name;
  return `${owner}.${String(key)}`;
}

/**
 * The method `decorator` is written on, checked to be an instance method (ZkError
 * `BadArguments` naming it otherwise), with its `Class.method` name for messages.
 */
export function instanceMethod(
  decorator: string,
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
): { readonly where: string; readonly original: AnyMethod } {
  const where = describeMethod(target, key);
  if (typeof descriptor.value !== 'function' || typeof target === 'function') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${decorator} goes on an instance method (${where} is not one)`,
    );
  }
  return { where, original: descriptor.value };
}

/** What an instance of a class with @Locked or @LeaderOnly methods needs, for messages. */
export const NEEDS_ZK_MODULE =
  'that imports ZkModule: import ZkModule.forRoot({ ..., isGlobal: true }) and let Nest create the class';

/**
 * What Nest injected into `instance` at `key` (see {@link injectInto}), or a ZkError
 * `BadArguments` saying what is missing (`decorated`: `Class.method is @Decorator`): the instance
 * was not made by a Nest application `needs` says (made with `new`, or the module missing).
 */
export function injectedInto<T>(
  instance: unknown,
  key: symbol,
  decorated: string,
  needs: string,
): T {
  const value =
    typeof instance === 'object' && instance !== null
      ? (instance as Record<symbol, T | undefined>)[key]
      : undefined;
  if (value === undefined) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${decorated}, but this instance was not made by a Nest application ${needs}`,
    );
  }
  return value;
}
