/**
 * The counting semaphore (Curator InterProcessSemaphoreV2 layout: a mutex at `<path>/locks`
 * serialises takers, leases live under `<path>/leases`) and the semaphore mutex.
 */
import { isZkError, joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import type { Observable } from 'rxjs';
import { removeOwnNode } from './recipe/clean-up';
import { Deadline } from './recipe/deadline';
import { LockConflictError } from './recipe/errors';
import { type Lease, retainLease } from './recipe/lease';
import { LeaseCore } from './recipe/lease-core';
import {
  type LockOptions,
  observeLease,
  type ResolvedLockOptions,
  resolveLockOptions,
} from './recipe/lock-recipe';
import { Marker, parseChild, recipeOfKind } from './recipe/node-names';
import { joinQueue, type QueueHold } from './recipe/queue';
import { type Decide, exclusiveRule } from './recipe/queue-rules';
import { timedAcquire } from './recipe/telemetry';

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

function resolveSemaphore(
  client: unknown,
  path: unknown,
  options: SemaphoreOptions | undefined,
): ResolvedLockOptions & { leases: number } {
  const leases = options?.leases;
  if (typeof leases !== 'number' || !Number.isInteger(leases) || leases < 1) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `semaphore: leases must be an integer >= 1, got ${String(leases)}`,
    );
  }
  return {
    ...resolveLockOptions(client, path, { ...options, reentrant: false }, 'semaphore'),
    leases,
  };
}

/** One acquisition, timed and traced (`zkrx.lock.acquire`, kind `semaphore`). */
function holdLease(
  resolved: ResolvedLockOptions & { leases: number },
  signal?: AbortSignal,
): Promise<LeaseCore> {
  const signals = [resolved.signal, signal].filter(
    (value): value is AbortSignal => value !== undefined,
  );
  const merged = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  return timedAcquire({ kind: 'semaphore', path: resolved.path, name: resolved.name }, merged, () =>
    takeLease(resolved, merged),
  );
}

async function takeLease(
  resolved: ResolvedLockOptions & { leases: number },
  merged: AbortSignal | undefined,
): Promise<LeaseCore> {
  const { client, path } = resolved;
  // One deadline for the whole acquisition (the gate, then the lease): its signal goes to both
  // queues and every call, and a timeout names the semaphore's path.
  const deadline = new Deadline(client, path, resolved.timeoutMs, merged);
  try {
    return await takeLeaseBy(resolved, deadline);
  } finally {
    deadline.stop();
  }
}

async function takeLeaseBy(
  resolved: ResolvedLockOptions & { leases: number },
  deadline: Deadline,
): Promise<LeaseCore> {
  const { client, path } = resolved;
  const signal = deadline.signal;
  for (;;) {
    deadline.check();
    let lease: LeaseJoin | undefined;
    const joinLease = () => {
      lease ??= new LeaseJoin(resolved, signal);
      return lease;
    };
    // Takers queue on the `locks` mutex, so leases are counted one taker at a time.
    let gate: QueueHold | null;
    try {
      gate = await joinQueue({
        client,
        path: joinPath(path, 'locks'),
        marker: Marker.lock,
        data: resolved.data,
        decide: exclusiveRule,
        signal,
        wait: true,
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
      continue;
    }
    try {
      const held = await joinLease().held();
      if (!held) continue;
      return new LeaseCore(
        {
          client,
          path,
          recipe: 'semaphore',
          onSuspended: resolved.onSuspended,
          revocable: resolved.revocable,
          name: resolved.name,
        },
        held,
      );
    } catch (error) {
      if (isZkError(error, ZkErrorCode.SessionExpired)) continue;
      throw error;
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
  private readonly hold: Promise<QueueHold | null>;
  /** Aborted to give the join up: with a LockConflictError on a conflict (see `held`). */
  private readonly stop = new AbortController();

  constructor(
    private readonly resolved: ResolvedLockOptions & { leases: number },
    signal: AbortSignal | undefined,
  ) {
    const { client, path } = resolved;
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
      decide: leaseRule(resolved.leases),
      // One signal made of two only when the acquisition has one (AbortSignal.any is costly).
      signal: signal ? AbortSignal.any([signal, this.stop.signal]) : this.stop.signal,
      wait: true,
      // Our `locks` node died with the session too: start over from the gate.
      onSessionLoss: 'fail',
      onQueued: resolved.onQueued,
      // A revocable lease watches its node from creation (it hears requests made while it
      // waits); one merely listened to, once held long enough (`LeaseCore.listen`).
      watchOwnNode: resolved.revocable,
    });
    // Awaited once our turn at the gate comes, or given up: never left unhandled meanwhile.
    this.hold.catch(ignore);
  }

  /** The lease's hold, once ours; rejects (nothing left behind) on a conflict or an error. */
  async held(): Promise<QueueHold | null> {
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

  private remove(lease: QueueHold): void {
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
  return observeLease((signal) => holdLease(resolveSemaphore(client, path, options), signal));
}

/** Takes one of `leases` slots: resolves the lease once ours. */
export async function acquireSemaphore(
  client: ZkClient,
  path: string,
  options: SemaphoreOptions,
): Promise<Lease> {
  const core = await holdLease(resolveSemaphore(client, path, options));
  return retainLease(core);
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
