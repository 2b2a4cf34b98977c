/**
 * A lock recipe (one kind of lock) from its spec — its name and how it makes its hold (`join`:
 * one queue and its rule, or more): its lease observable, promise API, try-once and the operator
 * running under it, with validation, re-entrancy, telemetry and clean-up shared by every recipe
 * (mutex, read and write locks, semaphore, leader election).
 */
import { type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import {
  from,
  type MonoTypeOperatorFunction,
  Observable,
  type ObservableInput,
  type Subscription,
} from 'rxjs';
import { Hold, heldInContext, runHolding } from './hold';
import { type Lease, retainLease, watchLeaseState } from './lease';
import { type LockOptions, type ResolvedLockOptions, resolveLockOptions } from './lock-options';
import { type HeldNode, joinQueue } from './queue';
import type { Decide } from './queue-rules';
import { timedAcquire } from './telemetry';

/** What the current async context holds, as a recipe sees it before joining the queue. */
export interface JoinContext {
  readonly client: ZkClient;
  readonly path: string;
  /** This client's live hold by the recipe named `recipe` on this path in the current context. */
  held(recipe: string): Hold | undefined;
}

/**
 * How an acquisition makes its hold (Curator's `createsTheLock`): joins a queue, where the
 * recipe's rule decides when it holds (`Decide`, Curator's `getsTheLock`) — `queueJoin` — or
 * more than one (the semaphore: a gate, then its leases). Given the options checked, with the
 * acquisition's one signal in them; resolves the node held, or null when `wait` is false and it
 * does not hold at once. On every other exit it rejects, the removal of its nodes under way.
 */
export type Join = (options: ResolvedLockOptions, wait: boolean) => Promise<HeldNode | null>;

/** A queue a recipe stands in: its node marker and its rule. */
export interface QueueSpec {
  /** The node name marker (`lock-`, `__READ__`, ...). */
  readonly marker: string;
  /**
   * The rule (Curator's `getsTheLock`): over a listing that contains our node, whether we hold,
   * and if not, what to wait for.
   */
  readonly decide: Decide;
  /**
   * Watch each node from its creation (default false: only a revocable lease's is): for a recipe
   * whose holds are long and few and whose hand-off speed matters more than two server packets
   * per node — an election. Its waiters then hear at once that their node went, the next in line
   * takes the hand-off without a listing (`OwnNodeWatch.mayTrust`), and the holder's loss on
   * deletion is heard from the start.
   */
  readonly watchOwnNode?: boolean;
}

/**
 * The join of one queue (every recipe's but the semaphore's): our node marked `marker`, holding
 * once `decide` says so over a listing that contains it.
 */
export function queueJoin(queue: QueueSpec): Join {
  const { marker, decide } = queue;
  const watchAlways = queue.watchOwnNode === true;
  return (resolved, wait) =>
    joinQueue({
      client: resolved.client,
      path: resolved.path,
      marker,
      data: resolved.data,
      decide,
      timeoutMs: resolved.timeoutMs,
      signal: resolved.signal,
      wait,
      onQueued: resolved.onQueued,
      // A revocable lease watches its node from creation (it hears requests made while it
      // waits): the watch it needs anyway also lets a hand-off be trusted without a listing.
      // A lease merely listened to watches it only once held long enough (`Hold.listen`).
      watchOwnNode: watchAlways || resolved.revocable,
    });
}

/** A recipe: its name, how it makes its hold, and how it shares the context with its siblings. */
export interface LockRecipeSpec {
  /**
   * The recipe's name (`mutex`, `read`, `write`, `semaphore`, ...): in messages and telemetry,
   * and the re-entrancy key — holds by one recipe on one path by one client in one async context
   * re-enter.
   */
  readonly name: string;
  /** How an acquisition makes its hold: `queueJoin({ marker, decide })` for one queue. */
  readonly join: Join;
  /**
   * Looks at the context's holds before joining: throw to refuse (e.g. a read→write upgrade),
   * or return a join that makes the hold another way (e.g. a write→read downgrade).
   */
  beforeJoin?(context: JoinContext): Join | undefined;
}

/** One signal of two, made only when both are given (`AbortSignal.any` is costly). */
function eitherSignal(
  first: AbortSignal | undefined,
  second: AbortSignal | undefined,
): AbortSignal | undefined {
  if (!first) return second;
  if (!second) return first;
  return AbortSignal.any([first, second]);
}

/**
 * A lease as an observable: `start(signal)` makes the hold once subscribed (a hold already in the
 * context can be given at once); emits the lease in a context holding it, errors with the
 * LockLostError on loss, completes when the lease ends otherwise, releases on unsubscribe (and
 * aborts `signal` while the hold is still being made).
 *
 * @param start Makes the hold; may throw or reject (the observable errors).
 * @return The lease, once.
 */
export function observeLease(
  start: (signal: AbortSignal) => Hold | Promise<Hold | undefined>,
): Observable<Lease> {
  return new Observable<Lease>((subscriber) => {
    const controller = new AbortController();
    let lease: Lease | undefined;
    let watching: Subscription | undefined;
    let started = false;
    const deliver = (hold: Hold | undefined) => {
      started = true;
      if (!hold) return;
      const own = retainLease(hold);
      if (subscriber.closed) {
        void own.release();
        return;
      }
      lease = own;
      watching = watchLeaseState(own, {
        next: (state) => {
          if (state === 'lost') subscriber.error(hold.lostError);
        },
        complete: () => subscriber.complete(),
      });
      if (!subscriber.closed) runHolding(hold, () => subscriber.next(own));
    };
    try {
      const starting = start(controller.signal);
      if (starting instanceof Hold) deliver(starting);
      else {
        starting.then(deliver, (error: unknown) => {
          started = true;
          subscriber.error(error);
        });
      }
    } catch (error) {
      started = true;
      subscriber.error(error);
    }
    return () => {
      // Gives up a hold still being made; once made, nothing listens to the signal any more (and
      // an abort would cost a DOMException for nothing).
      if (!started) controller.abort();
      watching?.unsubscribe();
      void lease?.release();
    };
  });
}

/**
 * A lock recipe: one kind of lock (the mutex, the read and write locks, the semaphore, the
 * leader latch and selector), as an observable of its lease, a promise, a try-once and an
 * operator running under it — with validation, re-entrancy, telemetry and the lease shared by
 * every recipe. Its spec says how it makes its hold.
 *
 * ## Example
 * ```ts
 * const mutex = new LockRecipe({ name: 'mutex', join: queueJoin({ marker: Marker.lock, decide: exclusiveRule }) });
 * const lease = await mutex.acquire(client, '/locks/orders');
 * console.log(lease.isHeld);
 * // Output: true
 * ```
 */
export class LockRecipe {
  constructor(private readonly spec: LockRecipeSpec) {}

  /** Emits the lease once held; releases on unsubscribe; errors LockLostError on loss. */
  lease(client: ZkClient, path: string, options?: LockOptions): Observable<Lease> {
    return observeLease((signal) => {
      const resolved = resolveLockOptions(client, path, options, this.spec.name);
      return this.reentered(resolved) ?? this.hold(resolved, true, signal);
    });
  }

  /** Resolves the lease once held. */
  async acquire(client: ZkClient, path: string, options?: LockOptions): Promise<Lease> {
    const resolved = resolveLockOptions(client, path, options, this.spec.name);
    const existing = this.reentered(resolved);
    if (existing) return retainLease(existing);
    const hold = await this.hold(resolved, true);
    if (!hold) {
      throw new ZkError(ZkErrorCode.SystemError, `${this.spec.name} ${path}: not acquired`);
    }
    return retainLease(hold);
  }

  /** The lease if the lock is free now, else null; never waits. */
  async tryAcquire(
    client: ZkClient,
    path: string,
    options?: Omit<LockOptions, 'timeoutMs'>,
  ): Promise<Lease | null> {
    // Never waits: a timeout, if given, is checked and then has nothing to bound.
    const resolved = {
      ...resolveLockOptions(client, path, options, this.spec.name),
      timeoutMs: undefined,
    };
    const existing = this.reentered(resolved);
    if (existing) return retainLease(existing);
    const hold = await this.hold(resolved, false);
    return hold ? retainLease(hold) : null;
  }

  /**
   * Runs the source only while holding the lock, releases when it ends: the operator behind
   * `withLock`, `withReadLock`, `withWriteLock` and `withSemaphore`.
   */
  withLock<T>(client: ZkClient, path: string, options?: LockOptions): MonoTypeOperatorFunction<T> {
    return (source) => this.holding(client, path, options, () => source);
  }

  /**
   * Runs `work(lease)` only while holding the lock: subscribed once held, unsubscribed (and the
   * observable erroring LockLostError) the moment the lock is lost, released when it ends.
   */
  holding<T>(
    client: ZkClient,
    path: string,
    options: LockOptions | undefined,
    work: (lease: Lease) => ObservableInput<T>,
  ): Observable<T> {
    return new Observable<T>((subscriber) => {
      let running: Subscription | undefined;
      const lock = this.lease(client, path, options).subscribe({
        next: (held) => {
          try {
            running = from(work(held)).subscribe(subscriber);
          } catch (error) {
            subscriber.error(error);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        // The lease ended without loss: released by hand or by client.close().
        complete: () => {
          if (!subscriber.closed) {
            subscriber.error(
              new ZkError(
                ZkErrorCode.ClientClosed,
                `${this.spec.name} ${path}: lease ended before the work`,
              ),
            );
          }
        },
      });
      return () => {
        // Stop the work first, then release the lock.
        running?.unsubscribe();
        lock.unsubscribe();
      };
    });
  }

  /**
   * Re-entrancy: a live hold by this recipe on this path by this client in this async context is
   * given again, counted, with no new node and no listing.
   *
   * Safe because it makes no new holder: the same node, session and context hold on, so the
   * re-entered lease is exactly as held as the outer one, and the two end together (the hold's
   * state is shared). Only a hold not yet known lost is re-entered; one whose session ended is
   * lost (session events), one whose node went is lost once the lease hears of it (its node
   * watch, set when anyone listens; a guard), and the call queues anew. Until the lease hears of
   * a deletion, re-entering makes no holder the outer lease was not already.
   */
  private reentered(resolved: ResolvedLockOptions): Hold | undefined {
    return resolved.reentrant
      ? heldInContext(resolved.client, this.spec.name, resolved.path)
      : undefined;
  }

  /**
   * One acquisition, timed and traced (`zkrx.lock.acquire`, see telemetry.ts): the caller's
   * signal and the observable's made one, then the hold made and kept by its Hold.
   */
  private hold(
    resolved: ResolvedLockOptions,
    wait: boolean,
    signal?: AbortSignal,
  ): Promise<Hold | undefined> {
    const merged = { ...resolved, signal: eitherSignal(resolved.signal, signal) };
    return timedAcquire(
      { kind: this.spec.name, path: resolved.path, name: resolved.name },
      merged.signal,
      () => this.makeHold(merged, wait),
    );
  }

  private async makeHold(resolved: ResolvedLockOptions, wait: boolean): Promise<Hold | undefined> {
    const { client, path } = resolved;
    const join =
      this.spec.beforeJoin?.({
        client,
        path,
        held: (recipe) => heldInContext(client, recipe, path),
      }) ?? this.spec.join;
    const held = await join(resolved, wait);
    if (!held) return undefined;
    return new Hold(
      {
        client,
        path,
        recipe: this.spec.name,
        onSuspended: resolved.onSuspended,
        revocable: resolved.revocable,
        name: resolved.name,
      },
      held,
    );
  }
}
