/**
 * A partition's item set, checked once per process: the names sorted, their digest, their
 * positions, and the chunks the set is stored in under `<path>/sets`. The members of one
 * process given the same array share one copy (the checks of 100,000 names are made once).
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { validatePath, ZkError, ZkErrorCode } from '@zkrx/core';
import { validateLockPath } from '@zkrx/lock/recipe';

/** A checked item set: what every member of a partition compares, stores and indexes. */
export interface ItemSet {
  /** The names, distinct, sorted by UTF-16 code units (the same order on every member). */
  readonly items: readonly string[];
  /** {@link itemSetDigest} of `items`. */
  readonly digest: string;
  /** Whether `item` is in the set. */
  has(item: string): boolean;
  /** The position of `item` in `items`, or -1. */
  indexOf(item: string): number;
}

/**
 * The longest member id or item name, in UTF-8 bytes (255, as most file systems' names): each is
 * a znode's name.
 */
export const MAX_NAME_BYTES = 255;

/** The most items a partition takes. */
export const MAX_ITEMS = 100_000;

/** Names an item's lock path cannot have: a semaphore's children (its layout would be read). */
const RESERVED_ITEMS: readonly string[] = ['leases', 'locks'];

/** The order items and ids are compared in on every member: UTF-16 code units. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Names that are surely fine as a znode's name and an item's lock path: printable ASCII
 * without `/`, not starting with `_` (a recipe's node names do, as `_c_<uuid>-`) and without
 * `__` (kazoo's `__lock__`): checked in one pass, for the sets of 100,000 names.
 */
const PLAIN_NAME = /^(?!_)(?!.*__)[\x21-\x2e\x30-\x7e]{1,255}$/;

/**
 * A name that becomes one znode: a member id or an item. Not empty, at most
 * {@link MAX_NAME_BYTES} bytes of UTF-8, no `/`, not `.` or `..`, no character ZooKeeper refuses
 * in a path.
 */
export function checkName(value: unknown, field: string, what: string): string {
  if (typeof value !== 'string') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ${field} must be a string, got ${value === null ? 'null' : typeof value}`,
    );
  }
  if (value.length === 0 || value.includes('/') || value === '.' || value === '..') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ${field} ${JSON.stringify(value)} cannot be a znode's name (not empty, no "/", not "." or "..")`,
    );
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ${field} is ${bytes} bytes long (${JSON.stringify(`${value.slice(0, 40)}...`)}): at most ${MAX_NAME_BYTES} bytes of UTF-8`,
    );
  }
  try {
    validatePath(`/${value}`);
  } catch (error) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ${field} ${JSON.stringify(value)} cannot be a znode's name: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return value;
}

/** Checks one item: a name that makes a valid lock path under `<path>/items`. */
function checkItem(item: unknown, index: number, path: string, what: string): string {
  if (typeof item === 'string' && PLAIN_NAME.test(item) && item !== '.' && item !== '..') {
    if (RESERVED_ITEMS.includes(item)) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `${what}: items[${index}] ${JSON.stringify(item)} is reserved (a semaphore's layout uses ${RESERVED_ITEMS.join(' and ')}): rename the item`,
      );
    }
    return item;
  }
  const name = checkName(item, `items[${index}]`, what);
  if (RESERVED_ITEMS.includes(name)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: items[${index}] ${JSON.stringify(name)} is reserved (a semaphore's layout uses ${RESERVED_ITEMS.join(' and ')}): rename the item`,
    );
  }
  try {
    validateLockPath(`${path}/items/${name}`, what);
  } catch (error) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: items[${index}] ${JSON.stringify(name)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return name;
}

/**
 * A digest of a sorted item set (names cannot hold a newline: ZooKeeper refuses control
 * characters in a path). Two sets are equal exactly when their digests are (SHA-256).
 *
 * ## Example
 * ```ts
 * console.log(itemSetDigest(['a', 'b']) === itemSetDigest(['a', 'b']));
 * // Output: true
 * ```
 */
export function itemSetDigest(items: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(String(items.length));
  for (const item of items) hash.update(`\n${item}`);
  return hash.digest('base64url');
}

/** A set from names already sorted and distinct. */
export function itemSetOf(items: readonly string[], digest = itemSetDigest(items)): ItemSet {
  let index: Map<string, number> | undefined;
  const positions = () => {
    if (!index) {
      index = new Map();
      for (let at = 0; at < items.length; at++) index.set(items[at] as string, at);
    }
    return index;
  };
  return {
    items,
    digest,
    has: (item) => positions().has(item),
    indexOf: (item) => positions().get(item) ?? -1,
  };
}

/** The sets checked in this process, by the array given and the partition's path. */
const checked = new WeakMap<readonly unknown[], Map<string, ItemSet>>();

/**
 * Checks one item set: an array of at most {@link MAX_ITEMS} distinct names, each of which
 * makes a valid lock path under `<path>/items`. The members of a process given the same array
 * share the result (an array given to a partition is treated as immutable).
 *
 * @param items The set given.
 * @param path The partition's path (checked already).
 * @param what The call, for the errors.
 * @return The checked set. Throws ZkError `BadArguments` naming the first bad item.
 */
export function checkItemSet(items: unknown, path: string, what: string): ItemSet {
  if (!Array.isArray(items)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: items must be an array of names (or an observable of such arrays), got ${items === null ? 'null' : typeof items}`,
    );
  }
  const byPath = checked.get(items);
  const known = byPath?.get(path);
  if (known && known.items.length === items.length) return known;
  if (items.length > MAX_ITEMS) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ${items.length} items: a partition takes at most ${MAX_ITEMS} (split the set over several partitions)`,
    );
  }
  const names: string[] = new Array(items.length);
  for (let at = 0; at < items.length; at++) names[at] = checkItem(items[at], at, path, what);
  names.sort(compareNames);
  for (let at = 1; at < names.length; at++) {
    if (names[at] === names[at - 1]) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `${what}: items has ${JSON.stringify(names[at])} twice: give each item once`,
      );
    }
  }
  const set = itemSetOf(names);
  const entry = byPath ?? new Map<string, ItemSet>();
  entry.set(path, set);
  checked.set(items, entry);
  return set;
}

/** The largest chunk a stored set is cut into (deflated bytes): well within a znode's 1 MB. */
export const SET_CHUNK_BYTES = 512 * 1024;

const chunksOf = new WeakMap<ItemSet, readonly Buffer[]>();

/** The chunks `set` is stored in: its names, newline-separated, deflated, cut into pieces. */
export function setChunks(set: ItemSet): readonly Buffer[] {
  const known = chunksOf.get(set);
  if (known) return known;
  const deflated = deflateRawSync(Buffer.from(set.items.join('\n'), 'utf8'));
  const chunks: Buffer[] = [];
  for (let at = 0; at < deflated.length || chunks.length === 0; at += SET_CHUNK_BYTES) {
    chunks.push(deflated.subarray(at, at + SET_CHUNK_BYTES));
  }
  chunksOf.set(set, chunks);
  return chunks;
}

/**
 * The set stored in `chunks`, if it is the one of `digest` (`count` names, sorted, distinct);
 * undefined otherwise (a chunk written by something else, or damaged).
 */
export function setFromChunks(
  chunks: readonly Buffer[],
  count: number,
  digest: string,
): ItemSet | undefined {
  let text: string;
  try {
    text = inflateRawSync(Buffer.concat(chunks)).toString('utf8');
  } catch {
    return undefined;
  }
  const items = count === 0 ? [] : text.split('\n');
  if (items.length !== count) return undefined;
  for (let at = 1; at < items.length; at++) {
    if (compareNames(items[at - 1] as string, items[at] as string) >= 0) return undefined;
  }
  if (itemSetDigest(items) !== digest) return undefined;
  return itemSetOf(items, digest);
}
