/**
 * The brand of a ZkClient: a `Symbol.for` key every copy of @zkrx/core in a process shares (its
 * ESM and CommonJS builds, two versions), so each recognises the others' clients.
 */

const brand = Symbol.for('zkrx.client:@zkrx/core.ZkClient');

/** Brands a new client (from its constructor). */
export function brandClient(client: object): void {
  Object.defineProperty(client, brand, { value: true, enumerable: false });
}

/** True for a client branded by any copy of @zkrx/core. */
export function isBrandedClient(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[brand] === true
  );
}
