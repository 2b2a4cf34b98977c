/**
 * One node name from any string: how a lock path is built from user input (an order id, a
 * tenant, a SKU), so that no id can make a nested lock, an invalid path or another's lock.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { isRecipeNodeName } from './recipe/lock-children';

/** A UTF-16 surrogate without its pair: not well-formed text (encodeURIComponent throws on it). */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Encodes any string as one ZooKeeper node name, to append to a lock path of your own:
 * `` `/locks/orders/${nodeName(orderId)}` ``. The build every lock path from user input goes
 * through: `/` can no longer make a nested lock, nor `''`, `.` or `..` an invalid path (a 500
 * instead of an answer), nor an id shaped like a lock node another recipe's path.
 *
 * The name is the string percent-encoded as `encodeURIComponent` does (letters, digits and
 * `-_.!~*'()` stay as they are, so `order-42` stays `order-42`), with three more rules: `''` is
 * `%` (no other string encodes to it), `.` and `..` are `%2E` and `%2E%2E`, and a name shaped
 * like a lock node (`_c_<uuid>-…`, `…__lock__0000000001`) has its `_` written `%5F`.
 * `encodeURIComponent` never writes `%` alone, `%2E` or `%5F`, so two different strings never
 * share a name; a lone UTF-16 surrogate (not well-formed text) is read as U+FFFD first, so such
 * strings may share one — more exclusion, never less.
 *
 * ## Example
 * ```ts
 * console.log(nodeName('42'), nodeName('a/b'), nodeName(''), nodeName('..'));
 * // Output: 42 a%2Fb % %2E%2E
 * ```
 *
 * @param value Any string (anything else throws ZkError `BadArguments`).
 * @return One node name, the same for the same string on every instance.
 */
export function nodeName(value: string): string {
  if (typeof value !== 'string') {
    throw new ZkError(ZkErrorCode.BadArguments, `nodeName: expected a string, got ${typeof value}`);
  }
  if (value === '') return '%';
  const encoded = encodeURIComponent(value.replace(loneSurrogate, '\uFFFD'));
  if (encoded === '.') return '%2E';
  if (encoded === '..') return '%2E%2E';
  return isRecipeNodeName(encoded) ? encoded.replaceAll('_', '%5F') : encoded;
}
