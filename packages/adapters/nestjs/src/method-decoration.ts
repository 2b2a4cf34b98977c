/**
 * What @Locked and @LeaderOnly share: replacing a method while keeping the metadata other
 * decorators put on it, and having Nest hand the module's services to the decorated instances.
 */
import { Inject } from '@nestjs/common';

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
