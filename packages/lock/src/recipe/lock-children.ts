/**
 * Recipe node names shared with Curator and kazoo: protected names (`_c_<uuid>-<marker>`),
 * the markers of each recipe, the order key every participant sorts children by, and the
 * revocation request a holder's node may carry.
 */
import { randomUUID } from 'node:crypto';

/** Curator's protected-mode prefix: `_c_` + a UUID + `-`, unique per create attempt. */
export const PROTECTED_PREFIX = '_c_';

/** Node name markers of the recipes zkrx shares paths with. */
export const Marker = {
  /** Curator InterProcessMutex and LeaderSelector. */
  lock: 'lock-',
  /** Curator InterProcessReadWriteLock, read side. */
  read: '__READ__',
  /** Curator InterProcessReadWriteLock, write side. */
  write: '__WRIT__',
  /** Curator LeaderLatch. */
  latch: 'latch-',
  /** Curator InterProcessSemaphoreV2 leases. */
  lease: 'lease-',
  /** kazoo Lock, WriteLock and Election. */
  kazooLock: '__lock__',
  /** kazoo ReadLock. */
  kazooRead: '__rlock__',
} as const;

export type Marker = (typeof Marker)[keyof typeof Marker];

/** What a child node is, as far as the lock recipes care. */
export type ChildKind = 'exclusive' | 'read' | 'write' | 'latch' | 'lease' | 'other';

/** A child of a lock path, parsed. */
export interface LockChild {
  /** The node's name (not its path). */
  readonly name: string;
  /** The text after the recipe marker (the sequence ZooKeeper appended), else the whole name. */
  readonly key: string;
  /**
   * Creation order: the sequence read as an unsigned 32-bit number (so the first wrap of the
   * parent's signed counter keeps its order), or +Infinity for names without a sequence.
   */
  readonly order: number;
  readonly kind: ChildKind;
  /** The protected id (`_c_<uuid>-`) when the name has one. */
  readonly protectedPrefix: string | undefined;
}

// Order matters: the longest markers that contain others come first.
const markers: readonly [string, ChildKind][] = [
  [Marker.kazooRead, 'read'],
  [Marker.kazooLock, 'write'],
  [Marker.read, 'read'],
  [Marker.write, 'write'],
  [Marker.latch, 'latch'],
  [Marker.lease, 'lease'],
  [Marker.lock, 'exclusive'],
];

const protectedPattern = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-/;

// ZooKeeper writes the parent's signed 32-bit counter with "%010d": ten characters, the sign
// taking one of them ("0000000042", "-000000005", "-2147483648" is eleven only at the minimum).
const sequencePattern = /^(?:\d{10}|-\d{9,10})$/;

function orderOf(key: string): number {
  if (!sequencePattern.test(key)) return Number.POSITIVE_INFINITY;
  const value = Number(key);
  return value < 0 ? value + 2 ** 32 : value;
}

/**
 * Names parsed lately: in a queue of C waiters each name is in about C listings (every join and
 * every hand-off lists), so parsing it once saves most of the work. A LockChild is immutable and
 * depends on the name alone. Cleared when full (a bound, not a cache policy worth more).
 */
const parsed = new Map<string, LockChild>();
const PARSED_LIMIT = 4096;

/**
 * Parses a child name: its kind from the recipe marker (Curator's and kazoo's), its key (the
 * text after the marker, as Curator reads it) and its creation order.
 */
export function parseChild(name: string): LockChild {
  let child = parsed.get(name);
  if (child === undefined) {
    child = parseName(name);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(name, child);
  }
  return child;
}

function parseName(name: string): LockChild {
  const match = protectedPattern.exec(name);
  const protectedPrefix = match ? match[0] : undefined;
  for (const [marker, kind] of markers) {
    const index = name.lastIndexOf(marker);
    if (index >= 0) {
      // kazoo: `__lock__` never occurs inside `__rlock__`; the longer marker is checked first anyway.
      const key = name.slice(index + marker.length);
      return { name, key, order: orderOf(key), kind, protectedPrefix };
    }
  }
  return { name, key: name, order: Number.POSITIVE_INFINITY, kind: 'other', protectedPrefix };
}

/**
 * Parses and sorts children in creation order: by sequence (read unsigned, so the first wrap of
 * ZooKeeper's signed counter keeps creation order where Curator's text order breaks), then
 * names without a sequence by text. Ties keep the server's order, as Curator does. Before the
 * wrap this is exactly Curator's and kazoo's order.
 */
export function sortChildren(names: readonly string[]): LockChild[] {
  return names
    .map(parseChild)
    .sort(
      (a, b) =>
        a.order - b.order || (a.order === Number.POSITIVE_INFINITY ? compareText(a.key, b.key) : 0),
    );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What holds a path whose children are of `kind`, in words for an error message. */
export function recipeOfKind(kind: ChildKind): string {
  switch (kind) {
    case 'exclusive':
      return 'mutex (or whileLeader election)';
    case 'read':
      return 'read lock';
    case 'write':
      return 'write lock';
    case 'latch':
      return 'leader election';
    case 'lease':
      return 'semaphore lease';
    default:
      return 'node';
  }
}

/** What a revocation request writes into the lock node (Curator's `Revoker`). */
export const REVOKE_MESSAGE = '__REVOKE__';

/** The children a semaphore keeps at its path (Curator InterProcessSemaphoreV2 layout). */
export const SEMAPHORE_CHILDREN: readonly string[] = ['leases', 'locks'];

/** A fresh protected prefix and the node name it gives with `marker`. */
export function protectedName(marker: string): { prefix: string; name: string } {
  const prefix = `${PROTECTED_PREFIX}${randomUUID()}-`;
  return { prefix, name: `${prefix}${marker}` };
}

/** The sequence number ZooKeeper appended to a node name (signed 32-bit), if any. */
export function sequenceOf(name: string): number | undefined {
  // The key is what follows the marker, so a wrapped "lock--000000005" reads as -5.
  const { key } = parseChild(name);
  return sequencePattern.test(key) ? Number(key) : undefined;
}

/** True when a path segment is a recipe's node (a protected name or a kazoo lock node). */
export function isRecipeNodeName(segment: string): boolean {
  return protectedPattern.test(segment) || /__r?lock__-?\d{10}$/.test(segment);
}
