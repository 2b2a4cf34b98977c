/**
 * Recipe node names shared with Curator and kazoo: protected names (`_c_<uuid>-<marker>`),
 * the markers of each recipe, and the order key every participant sorts children by.
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
  /** The text participants sort by: what follows the recipe marker (the sequence), else the name. */
  readonly key: string;
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

/**
 * Parses a child name. The order key is Curator's: the text after the last occurrence of the
 * recipe's marker (the 10-digit sequence ZooKeeper appended), or the whole name when no marker
 * is found. kazoo's `__lock__`/`__rlock__` children get their sequence as key, so they queue by
 * sequence with everyone else.
 */
export function parseChild(name: string): LockChild {
  const match = protectedPattern.exec(name);
  const protectedPrefix = match ? match[0] : undefined;
  for (const [marker, kind] of markers) {
    const index = name.lastIndexOf(marker);
    if (index >= 0) {
      // kazoo: `__lock__` also occurs inside `__rlock__`; the longer marker is checked first.
      return { name, key: name.slice(index + marker.length), kind, protectedPrefix };
    }
  }
  return { name, key: name, kind: 'other', protectedPrefix };
}

/** Parses and sorts children by order key (ties keep the server's order, as Curator does). */
export function sortChildren(names: readonly string[]): LockChild[] {
  return names.map(parseChild).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A fresh protected prefix and the node name it gives with `marker`. */
export function protectedName(marker: string): { prefix: string; name: string } {
  const prefix = `${PROTECTED_PREFIX}${randomUUID()}-`;
  return { prefix, name: `${prefix}${marker}` };
}

/** The sequence number ZooKeeper appended to a node name (signed 32-bit), if any. */
export function sequenceOf(name: string): number | undefined {
  // The key is what follows the marker, so a wrapped "lock--2147483648" reads as negative.
  const { key } = parseChild(name);
  return /^-?\d{10}$/.test(key) ? Number(key) : undefined;
}

/** True when a path segment is a recipe's node (a protected name or a kazoo lock node). */
export function isRecipeNodeName(segment: string): boolean {
  return protectedPattern.test(segment) || /__r?lock__-?\d{10}$/.test(segment);
}
