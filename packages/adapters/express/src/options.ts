/**
 * Checks of the adapters' options, made once when the middleware is created: a bad option
 * throws ZkError `BadArguments` naming the middleware and the option.
 */
import { isZkError, ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { validateLockPath } from '@zkrx/lock/recipe';

function bad(where: string, message: string): ZkError {
  return new ZkError(ZkErrorCode.BadArguments, `${where}: ${message}`);
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/** The options object itself. */
export function checkOptions(where: string, options: unknown): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw bad(where, `expected an options object, got ${shown(options)}`);
  }
  return options as Record<string, unknown>;
}

/** A ZkClient from any copy of @zkrx/core (its brand, `ZkClient.isInstance`). */
export function checkClient(where: string, client: unknown): ZkClient {
  if (!ZkClient.isInstance(client)) {
    throw bad(where, `client must be a ZkClient from @zkrx/core's createClient`);
  }
  return client;
}

/** A whole number of seconds >= 0 (a `Retry-After` value), or the default. */
export function checkSeconds(where: string, name: string, value: unknown, fallback: number) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw bad(where, `${name} must be a whole number of seconds >= 0, got ${shown(value)}`);
  }
  return value;
}

/** A finite number of milliseconds >= 0, or undefined. */
export function checkMilliseconds(where: string, name: string, value: unknown) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw bad(where, `${name} must be a finite number of milliseconds >= 0, got ${shown(value)}`);
  }
  return value;
}

/** An HTTP status code a client can act on: 400..599. */
export function checkStatusCode(where: string, name: string, value: unknown, fallback: number) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 400 || value > 599) {
    throw bad(where, `${name} must be an HTTP error status (400..599), got ${shown(value)}`);
  }
  return value;
}

/** A boolean, or the default. */
export function checkBoolean(where: string, name: string, value: unknown, fallback: boolean) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw bad(where, `${name} must be a boolean, got ${shown(value)}`);
  return value;
}

/** A function (required), or an optional one. */
export function checkChoice<T extends string>(
  where: string,
  name: string,
  value: unknown,
  choices: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${where}: ${name} must be one of ${choices.map((choice) => `'${choice}'`).join(', ')}, got ${String(value)}`,
    );
  }
  return value as T;
}

export function checkFunction<F>(where: string, name: string, value: unknown, required: true): F;
export function checkFunction<F>(
  where: string,
  name: string,
  value: unknown,
  required: false,
): F | undefined;
export function checkFunction<F>(where: string, name: string, value: unknown, required: boolean) {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'function')
    throw bad(where, `${name} must be a function, got ${shown(value)}`);
  return value as F;
}

/** A non-empty string, or undefined. */
export function checkOptionalString(where: string, name: string, value: unknown) {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw bad(where, `${name} must be a non-empty string, got ${shown(value)}`);
  }
  return value;
}

/** A lock or election path (ZkError `InvalidPath` naming the middleware otherwise). */
export function checkPath(where: string, value: unknown): string {
  try {
    return validateLockPath(value);
  } catch (error) {
    if (!isZkError(error)) throw error;
    throw new ZkError(error.code, `${where}: ${error.message}`, {
      path: error.path,
      cause: error,
    });
  }
}
