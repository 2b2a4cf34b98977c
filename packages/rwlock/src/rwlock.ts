/**
 * The read-write lock (Curator InterProcessReadWriteLock layout): readers share, writers
 * exclude, FIFO across both, herd-free waits, write→read downgrade, read→write upgrade refused.
 */

import { type ZkClient, ZkrxError } from '@zkrx/core';
import { type Lease, LockLostError, type LockOptions } from '@zkrx/lock';
import {
  type Decide,
  type Hold,
  type Join,
  joinQueue,
  LockRecipe,
  Marker,
  mutexRecipe,
  parseChild,
  queueJoin,
  removeOwnNode,
} from '@zkrx/lock/recipe';
import type { MonoTypeOperatorFunction, Observable } from 'rxjs';

/**
 * Asking for the write lock while this async context holds the read lock of the same path
 * would wait forever on itself (Curator deadlocks there): zkrx refuses at once.
 */
export class LockUpgradeError extends ZkrxError<'LockUpgrade'> {
  protected static override readonly marker = '@zkrx/rwlock.LockUpgradeError';
  declare static readonly isInstance: (value: unknown) => value is LockUpgradeError;
  override readonly name = 'LockUpgradeError';

  constructor(readonly path: string) {
    super(
      'LockUpgrade',
      `Cannot take the write lock of ${path} while holding its read lock (it would wait on itself): release the read lock first`,
    );
  }
}

/**
 * A reader holds when no writer sorts before it; it waits only for the nearest writer before it
 * (herd-free), then lists again. Any node of an exclusive kind counts as a writer: a mutex, an
 * election's, a kazoo write lock's (one path, one lock: a reader must not share with a mutex
 * holder). Only read nodes share; unknown names (no sequence) sort last and block nobody.
 *
 * Safe because the listing contains our node: a node created later in the same parent znode
 * has a higher sequence (sorts after us), and the parent cannot be reaped while our node is in
 * it. The only nodes without a fresh sequence are downgrade read nodes, which are readers.
 */
export const readRule: Decide = (children, ourIndex) => {
  for (let index = ourIndex - 1; index >= 0; index--) {
    const child = children[index] as (typeof children)[number];
    if (child.kind !== 'read' && child.kind !== 'other') return { holds: false, waitFor: child };
  }
  return { holds: true };
};

/**
 * A writer holds when first; it waits only for the node just before it, then lists again (a
 * downgrading writer's read node, with the writer's key, may sort before us meanwhile).
 *
 * Safe as the mutex is (a listing containing our node, one parent znode). A downgrade read node
 * carries the key of a writer that held, and it is kept only while that writer's node still
 * exists (see `downgrade`): a node that sorts before us, so we were not first while it stood.
 */
export const writeRule: Decide = (children, ourIndex) =>
  ourIndex === 0
    ? { holds: true }
    : { holds: false, waitFor: children[ourIndex - 1] as (typeof children)[number] };

/**
 * Downgrade: the write holder takes the read lock at once with a read node named with its write
 * node's key (Curator 5.5+), so it sorts with the write node and no writer queued behind slips in
 * when the write lock is released. Made by the queue's own create (protected name, recovery of a
 * create whose reply was lost) and granted only on a listing, made after the read node exists,
 * that still shows our write node, owned by the same session.
 *
 * Safe because while our write node exists we hold the write lock, and nothing sorts before a
 * holding writer: so the read node, sorting with it, has no writer before it. If the write node
 * is gone (lease lost: session expired, node deleted, even the path reaped and made again), the
 * listing lacks it (its name holds a UUID of ours) and the read node is removed: no hold.
 */
function downgrade(writer: Hold): Join {
  const writerName = writer.node.slice(writer.node.lastIndexOf('/') + 1);
  const { key } = parseChild(writerName);
  return async (options) => {
    const hold = await joinQueue({
      client: options.client,
      path: options.path,
      marker: `${Marker.read}${key}`,
      sequential: false,
      data: options.data,
      decide: (children) =>
        writer.isHeld && children.some((child) => child.name === writerName)
          ? { holds: true }
          : { holds: false, waitFor: 'children' },
      wait: false,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    if (hold && hold.sessionId === writer.sessionId) return hold;
    if (hold) {
      hold.nodeWatch?.unsubscribe();
      void removeOwnNode(options.client, hold.node, hold.sessionId);
    }
    throw writer.lostError ?? new LockLostError(options.path, 'session-expired');
  };
}

const writeRecipe = new LockRecipe({
  name: 'write',
  join: queueJoin({ marker: Marker.write, decide: writeRule }),
  beforeJoin(context) {
    if (context.held('read') && !context.held('write')) throw new LockUpgradeError(context.path);
    return undefined;
  },
});

const readRecipe = new LockRecipe({
  name: 'read',
  join: queueJoin({ marker: Marker.read, decide: readRule }),
  beforeJoin(context) {
    const writer = context.held('write');
    return writer ? downgrade(writer) : undefined;
  },
});

/** The locks of one path: its mutex, and the read and write locks of its read-write lock. */
export type LockKind = 'mutex' | 'read' | 'write';

/**
 * The locks of one path by kind, each as its recipe (observable, promise, try-once and operator
 * forms), for code that is told the kind as data — the adapters' `lock: 'read'` option. Any two
 * of them on one path exclude each other, except two readers: a reader waits for a mutex holder
 * as for a writer.
 *
 * ## Example
 * ```ts
 * const lease = await lockKinds[settings.lock].acquire(client, '/locks/catalog');
 * console.log(lease.isHeld);
 * // Output: true
 * ```
 */
export const lockKinds: Readonly<Record<LockKind, LockRecipe>> = Object.freeze({
  mutex: mutexRecipe,
  read: readRecipe,
  write: writeRecipe,
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
  return readRecipe.lease(client, path, options);
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
  return writeRecipe.lease(client, path, options);
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
  return readRecipe.withLock<T>(client, path, options);
}

/** Runs the source only while holding the write lock; unsubscribes it when the lock is lost. */
export function withWriteLock<T>(
  client: ZkClient,
  path: string,
  options?: LockOptions,
): MonoTypeOperatorFunction<T> {
  return writeRecipe.withLock<T>(client, path, options);
}
