/**
 * Gates for tests that wait on an event rather than a time: a promise and the function that
 * opens it, handed to whatever the test is waiting for.
 */

/** A promise and the function that resolves it (a latch opened once). */
export interface Gate<T = void> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
}

/** A gate: `await gate.promise` waits until someone calls `gate.resolve()`. */
export function deferred<T = void>(): Gate<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
