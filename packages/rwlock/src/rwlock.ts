/**
 * The read-write lock (Curator InterProcessReadWriteLock layout): readers share, writers
 * exclude, FIFO across both, herd-free waits, write→read downgrade, read→write upgrade refused.
 */

import { randomUUID } from 'node:crypto';
import { joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import {
  type Decide,
  defineLockRecipe,
  type Lease,
  type LockOptions,
  Marker,
  PROTECTED_PREFIX,
  parseChild,
  type QueueHold,
} from '@zkrx/lock';
import type { MonoTypeOperatorFunction, Observable } from 'rxjs';

/**
 * Asking for the write lock while this async context holds the read lock of the same path
 * would wait forever on itself (Curator deadlocks there): zkrx refuses at once.
 */
export class LockUpgradeError extends Error {
  override readonly name = 'LockUpgradeError';
  constructor(readonly path: string) {
    super(
      `Cannot take the write lock of ${path} while holding its read lock (it would wait on itself): release the read lock first`,
    );
  }
}

/**
 * A reader holds when no writer sorts before it; it waits only for the nearest writer before
 * it. No writer can appear before it later (writers are sequential), so when that writer goes
 * the listing is trusted if it showed no other writer before it; otherwise one listing tells
 * which of those are gone.
 */
export const readRule: Decide = (children, ourIndex) => {
  for (let index = ourIndex - 1; index >= 0; index--) {
    const child = children[index] as (typeof children)[number];
    if (child.kind !== 'write') continue;
    const earlierWriter = children.slice(0, index).some((other) => other.kind === 'write');
    return { holds: false, waitFor: child, relist: earlierWriter };
  }
  return { holds: true };
};

/**
 * A writer holds when first; it waits only for the node just before it, and lists again when
 * that goes: a downgrading writer's read node (same key as the writer) may sort before us.
 */
export const writeRule: Decide = (children, ourIndex) =>
  ourIndex === 0
    ? { holds: true }
    : { holds: false, waitFor: children[ourIndex - 1] as (typeof children)[number], relist: true };

const writeRecipe = defineLockRecipe({
  kind: 'write',
  marker: Marker.write,
  decide: writeRule,
  beforeJoin(context) {
    if (context.held('read') && !context.held('write')) throw new LockUpgradeError(context.path);
    return undefined;
  },
});

const readRecipe = defineLockRecipe({
  kind: 'read',
  marker: Marker.read,
  decide: readRule,
  beforeJoin(context) {
    const writer = context.held('write');
    if (!writer) return undefined;
    // Downgrade: the write holder takes the read lock at once with a read node that sorts
    // with its write node (Curator 5.5+), so no writer queued behind slips in on release.
    return async (options): Promise<QueueHold> => {
      const { key } = parseChild(writer.node.slice(writer.node.lastIndexOf('/') + 1));
      const name = `${PROTECTED_PREFIX}${randomUUID()}-${Marker.read}${key}`;
      const created = await context.client.promises.create(
        joinPath(context.path, name),
        options.data,
        {
          mode: 'ephemeral',
        },
      );
      if (created.stat.ephemeralOwner !== writer.sessionId) {
        await context.client.promises.delete(created.path).catch(() => {});
        throw new ZkError(
          ZkErrorCode.SessionExpired,
          `read lock ${context.path}: the write lock's session ended`,
        );
      }
      return {
        node: created.path,
        name,
        stat: created.stat,
        sessionId: created.stat.ephemeralOwner,
      };
    };
  },
});

/**
 * The read lock as an observable: emits the {@link Lease} once held (no writer before us),
 * releases on unsubscribe, errors LockLostError on loss. Taken while holding the write lock of
 * the same path in this async context, it is granted at once (downgrade).
 *
 * ## Example
 * ```ts
 * readLock(client, '/locks/catalog').subscribe((lease) => console.log('reading', lease.isHeld));
 * // Output: reading true
 * ```
 */
export function readLock(client: ZkClient, path: string, options?: LockOptions): Observable<Lease> {
  return readRecipe.lease$(client, path, options);
}

/**
 * The write lock as an observable: emits the {@link Lease} once held (first in line), releases
 * on unsubscribe, errors LockLostError on loss, and errors LockUpgradeError at once when this
 * async context holds the read lock of the same path.
 */
export function writeLock(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): Observable<Lease> {
  return writeRecipe.lease$(client, path, options);
}

/** Resolves the read lease once held. */
export function acquireRead(client: ZkClient, path: string, options?: LockOptions): Promise<Lease> {
  return readRecipe.acquire(client, path, options);
}

/** Resolves the write lease once held; rejects LockUpgradeError when this context holds the read lock. */
export function acquireWrite(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): Promise<Lease> {
  return writeRecipe.acquire(client, path, options);
}

/** The read lease if no writer is in line now, else null; never waits. */
export function tryAcquireRead(
  client: ZkClient,
  path: string,
  options?: Omit<LockOptions, 'timeoutMs'>,
): Promise<Lease | null> {
  return readRecipe.tryAcquire(client, path, options);
}

/** The write lease if nobody is in line now, else null; never waits. */
export function tryAcquireWrite(
  client: ZkClient,
  path: string,
  options?: Omit<LockOptions, 'timeoutMs'>,
): Promise<Lease | null> {
  return writeRecipe.tryAcquire(client, path, options);
}

/**
 * Runs the source only while holding the read lock; unsubscribes it when the lock is lost.
 *
 * ## Example
 * ```ts
 * report$.pipe(withReadLock(client, '/locks/catalog')).subscribe();
 * ```
 */
export function withReadLock<T>(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): MonoTypeOperatorFunction<T> {
  return readRecipe.guard<T>(client, path, options);
}

/** Runs the source only while holding the write lock; unsubscribes it when the lock is lost. */
export function withWriteLock<T>(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): MonoTypeOperatorFunction<T> {
  return writeRecipe.guard<T>(client, path, options);
}
