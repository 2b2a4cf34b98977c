/**
 * The counting semaphore (Curator InterProcessSemaphoreV2 layout: a mutex at `<path>/locks`
 * serialises takers, leases live under `<path>/leases`) as a recipe whose join stands in both
 * queues, and the semaphore mutex.
 */
import { isZkError, joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { defer, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { removeOwnNode } from './recipe/clean-up';
import { Deadline } from './recipe/deadline';
import { LockConflictError } from './recipe/errors';
import type { Lease } from './recipe/lease';
import { Marker, parseChild, recipeOfKind } from './recipe/lock-children';
import type { LockOptions, ResolvedLockOptions } from './recipe/lock-options';
import { type Join, LockRecipe } from './recipe/lock-recipe';
import { type HeldNode, joinQueue } from './recipe/queue';
import { type Decide, exclusiveRule } from './recipe/queue-rules';

const ignore = () => {};

export interface SemaphoreOptions extends Omit<LockOptions, 'reentrant'> {
  /** How many holders at once (Curator's maxLeases). An integer >= 1. */
  leases: number;
}

/**
 * Curator's rule for leases: hold while the leases (ours included) number at most `leases`.
 *
 * Safe without the `locks` gate (which only keeps takers from starving each other): say k
 * holders each counted at most `leases` in a listing containing their node. The last of those
 * listings was made after every one of the k nodes was created (each was in its owner's own,
 * earlier or equal, listing) and while all of them still existed (they hold at once, later), so
 * it counted all k: k <= `leases`. A `leases` parent with a node in it cannot be reaped, so all
 * those listings were of one parent znode.
 */
function leaseRule(leases: number): Decide {
  return (children) =>
    children.length <= leases ? { holds: true } : { holds: false, waitFor: 'children' };
}

/**
 * The semaphore of `leases` slots as a recipe (not re-entrant: each acquisition takes a slot of
 * its own). Throws ZkError `BadArguments` for a bad `leases`, before anything is sent.
 */
function semaphoreOf(options: SemaphoreOptions | undefined): LockRecipe {
  const leases = options?.leases;
  if (typeof leases !== 'number' || !Number.isInteger(leases) || leases < 1) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `semaphore: leases must be an integer >= 1, got ${String(leases)}`,
    );
  }
  return new LockRecipe({ name: 'semaphore', join: semaphoreJoin(leases) });
}

/**
 * The semaphore's join: one turn at the `locks` gate (a mutex), then a node in the `leases`
 * queue, counted by `leaseRule`; the gate's node goes once the lease holds (or is given up).
 * Under one deadline: its signal goes to both queues and every call, and a timeout names the
 * semaphore's path. Without `wait` (a try-once), neither queue waits: a taker passing the gate
 * at that moment, or every slot taken, answers null, as Curator's `acquire` with no time does.
 */
function semaphoreJoin(leases: number): Join {
  return async (resolved, wait) => {
    const deadline = new Deadline(
      resolved.client,
      resolved.path,
      resolved.timeoutMs,
      resolved.signal,
    );
    try {
      return await takeLease(resolved, leases, wait, deadline);
    } finally {
      deadline.stop();
    }
  };
}

async function takeLease(
  resolved: ResolvedLockOptions,
  leases: number,
  wait: boolean,
  deadline: Deadline,
): Promise<HeldNode | null> {
  const { client, path } = resolved;
  for (;;) {
    deadline.check();
    let lease: LeaseJoin | undefined;
    const joinLease = () => {
      lease ??= new LeaseJoin(resolved, leases, wait, deadline);
      return lease;
    };
    // Takers queue on the `locks` mutex, so leases are counted one taker at a time.
    let gate: HeldNode | null;
    try {
      gate = await joinQueue({
        client,
        path: joinPath(path, 'locks'),
        marker: Marker.lock,
        data: resolved.data,
        decide: exclusiveRule,
        signal: deadline.signal,
        wait,
        // Our turn at the gate is most likely next: the lease's create and count go out with the
        // gate's listing, one round trip earlier. Safe without the gate (see `leaseRule`): the
        // gate only keeps takers from starving each other and from watching the leases in a herd,
        // and a lease taken early is used once our turn comes, or given up.
        onLikelyHold: joinLease,
      });
    } catch (error) {
      lease?.giveUp();
      throw error;
    }
    if (!gate) {
      lease?.giveUp();
      if (!wait) return null;
      continue;
    }
    try {
      const held = await joinLease().held();
      if (held || !wait) return held;
    } catch (error) {
      if (!isZkError(error, ZkErrorCode.SessionExpired)) throw error;
    } finally {
      // Let the next taker count: remove our `locks` node without waiting for it.
      gate.nodeWatch?.unsubscribe();
      void removeOwnNode(client, gate.node, gate.sessionId);
    }
  }
}

/**
 * One join of the `leases` queue, and the check that no other kind of lock queued at the
 * semaphore's path: started once our turn at the gate has come, or is most likely next.
 */
class LeaseJoin {
  private readonly hold: Promise<HeldNode | null>;
  /** Aborted to give the join up: with a LockConflictError on a conflict (see `held`). */
  private readonly stop = new AbortController();

  constructor(
    private readonly resolved: ResolvedLockOptions,
    leases: number,
    wait: boolean,
    deadline: Deadline,
  ) {
    const { client, path } = resolved;
    const signal = deadline.signal;
    // Another kind of lock queued at our path (a mutex, a read-write lock, an election) cannot
    // share it: listed now that our `locks` child exists, so whichever of us lists last sees the
    // other (a queue lock fails on seeing `locks`/`leases` among its children). Sent with the
    // lease's create (no round trip of its own); a conflict gives up the lease's join.
    client.promises.children(path, { signal }).then((names) => {
      const other = names.map(parseChild).find((child) => child.kind !== 'other');
      if (other) {
        this.stop.abort(new LockConflictError(path, 'semaphore', recipeOfKind(other.kind)));
      }
    }, ignore);
    this.hold = joinQueue({
      client,
      path: joinPath(path, 'leases'),
      marker: Marker.lease,
      data: resolved.data,
      decide: leaseRule(leases),
      // One signal made of two only when the acquisition has one (AbortSignal.any is costly).
      signal: signal ? AbortSignal.any([signal, this.stop.signal]) : this.stop.signal,
      wait,
      // Our `locks` node died with the session too: start over from the gate.
      onSessionLoss: 'fail',
      onQueued: resolved.onQueued,
      // A revocable lease watches its node from creation (it hears requests made while it
      // waits); one merely listened to, once held long enough (`Hold.listen`).
      watchOwnNode: resolved.revocable,
    });
    // Awaited once our turn at the gate comes, or given up: never left unhandled meanwhile.
    this.hold.catch(ignore);
  }

  /** The lease's hold, once ours; rejects (nothing left behind) on a conflict or an error. */
  async held(): Promise<HeldNode | null> {
    const lease = await this.hold;
    if (lease && this.stop.signal.aborted) {
      this.remove(lease);
      throw this.stop.signal.reason;
    }
    return lease;
  }

  /** Not to be used (our turn at the gate did not come): our lease node goes. */
  giveUp(): void {
    this.stop.abort();
    this.hold.then((lease) => {
      if (lease) this.remove(lease);
    }, ignore);
  }

  private remove(lease: HeldNode): void {
    lease.nodeWatch?.unsubscribe();
    void removeOwnNode(this.resolved.client, lease.node, lease.sessionId);
  }
}

/**
 * A counting semaphore as an observable: emits a {@link Lease} once one of `leases` slots is
 * ours, releases it on unsubscribe, errors LockLostError on loss. Shares its path with Curator's
 * InterProcessSemaphoreV2.
 *
 * ## Example
 * ```ts
 * semaphore(client, '/semaphores/exports', { leases: 4 }).subscribe((lease) => console.log('slot', lease.node));
 * ```
 */
export function semaphore(
  client: ZkClient,
  path: string,
  options: SemaphoreOptions,
): Observable<Lease> {
  return defer(() => semaphoreOf(options).lease(client, path, { ...options, reentrant: false }));
}

/** Takes one of `leases` slots: resolves the lease once ours. */
export async function acquireSemaphore(
  client: ZkClient,
  path: string,
  options: SemaphoreOptions,
): Promise<Lease> {
  return semaphoreOf(options).acquire(client, path, { ...options, reentrant: false });
}

/**
 * Takes one of `leases` slots if one is free now: the lease, or null. Never waits — not even for
 * another taker passing the gate at that moment (then null, as Curator's `acquire` with no time).
 */
export async function tryAcquireSemaphore(
  client: ZkClient,
  path: string,
  options: Omit<SemaphoreOptions, 'timeoutMs'>,
): Promise<Lease | null> {
  return semaphoreOf(options).tryAcquire(client, path, { ...options, reentrant: false });
}

/**
 * Runs the source only while holding one of `leases` slots: subscribes to it once the lease is
 * ours, releases it when the source completes, errors or is unsubscribed, and unsubscribes it
 * (erroring with LockLostError) the moment the lease is lost.
 *
 * ## Example
 * ```ts
 * defer(() => exportReport(day)).pipe(withSemaphore(client, '/semaphores/exports', { leases: 4 })).subscribe();
 * ```
 */
export function withSemaphore<T>(
  client: ZkClient,
  path: string,
  options: SemaphoreOptions,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() =>
      semaphoreOf(options).holding(client, path, { ...options, reentrant: false }, () => source),
    );
}

/**
 * A mutex made of a one-lease semaphore (Curator InterProcessSemaphoreMutex): not re-entrant,
 * and its lease can be released from anywhere, not only the context that acquired it.
 */
export function semaphoreMutex(
  client: ZkClient,
  path: string,
  options: Omit<SemaphoreOptions, 'leases'> = {},
): Observable<Lease> {
  return semaphore(client, path, { ...options, leases: 1 });
}
