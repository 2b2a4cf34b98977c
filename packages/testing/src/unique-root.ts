/**
 * Random root paths so each test works under its own znode and never sees another's.
 * Pure: nothing is created on the server.
 */
import { randomBytes } from 'node:crypto';

/**
 * Returns a fresh random root path such as `/t-3f9a0c2e5b71`, for a test to isolate itself.
 *
 * ## Example
 *
 * ```ts
 * const root = uniqueRoot('lock');
 * console.log(root);
 * // Output: /lock-3f9a0c2e5b71
 * ```
 *
 * @param prefix The path's first characters, without `/`; `t` by default.
 * @return A path of one segment, unique with overwhelming probability (48 random bits).
 */
export function uniqueRoot(prefix = 't'): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(prefix) || prefix === '.' || prefix === '..') {
    throw new Error(`Invalid root prefix "${prefix}": use letters, digits, '_', '.' or '-'`);
  }
  return `/${prefix}-${randomBytes(6).toString('hex')}`;
}
