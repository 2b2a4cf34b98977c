/**
 * `partition`: a sticky, cooperative work partitioner. Every member computes the same
 * assignment (assign.ts) and takes its share one lock per item; an item is in a member's
 * assignment only while it holds that item's lock, and leaves it before the lock is released.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isConnectedState, isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type Lease, LockLostError, mutex } from '@zkrx/lock';
import { Observable, type Subscription } from 'rxjs';
import { assign } from './assign';
import { OwnershipEndedError, type OwnershipEndedReason } from './errors';
import { HolderWatch } from './holder-watch';
import { type Joined, joinMembers, type Member } from './members';
import {
  checkItems,
  itemPath,
  membersPath,
  type PartitionOptions,
  type ResolvedPartition,
  resolvePartition,
} from './options';
import { type OwnedItem, OwnedItemHandle } from './owned-item';

/** What a member owns, emitted whenever that or the membership changes. */
export interface Assignment {
  /** The items this member owns now, sorted. */
  readonly items: readonly string[];
  /** Each owned item's token, signal and lock. */
  readonly owned: ReadonlyMap<string, OwnedItem>;
  /** Items owned now and not in the previous emission. */
  readonly added: readonly string[];
  /** Items in the previous emission and no longer owned (their signals have aborted). */
  readonly removed: readonly string[];
  /** The live members as this member sees them, in join order. */
  readonly members: readonly Member[];
}

/** Errors of a waiting slot that say "no connection now", not "this cannot work". */
const transientCodes: readonly string[] = [ZkErrorCode.ConnectTimeout, ZkErrorCode.SessionExpired];

/** Runs callbacks in the async context of the subscription (not of the lock that woke us). */
function contextOfNow(): <T>(fn: () => T) => T {
  const snapshot = (AsyncLocalStorage as unknown as { snapshot?: () => <T>(fn: () => T) => T })
    .snapshot;
  return typeof snapshot === 'function' ? snapshot() : (fn) => fn();
}

/** One item this member wants or has: its lock's subscription. */
interface Slot {
  readonly item: string;
  state: 'waiting' | 'held';
  subscription: Subscription | undefined;
  owned: OwnedItemHandle | undefined;
}

/**
 * The engine of one partition subscription. Its safety rests on two rules, each kept in one
 * place below (and attacked by `partition.integration.test.ts`):
 *
 * - IN ONLY WHILE HELD (`onHeld`): an item enters `owned` — hence an emission — only in the
 *   `next` of its lock's observable, which @zkrx/lock calls once its queue rule found our node
 *   first in a listing that contains it. For one lock path, ZooKeeper numbers the children of
 *   one parent in creation order and cannot reap that parent while our node is in it: no node
 *   made later sorts before ours, so we hold until our node goes.
 * - OUT BEFORE RELEASED (`giveUp`): a held item's lock is released (its subscription ended,
 *   which deletes the node) only after its signal was aborted and an assignment without it was
 *   emitted — synchronously, in that order — and after the runs it tracks settled. So no other
 *   member can hold the item while this one still says it owns it.
 *
 * A lock lost without a release (session expired, suspended, node deleted) is out of our hands:
 * the item leaves the assignment as soon as the lock tells (`onSlotError`), as a lease's signal
 * aborts. The assignment itself (who should try) never decides who holds.
 */
class PartitionEngine {
  private readonly client: ZkClient;
  private readonly path: string;
  private readonly inContext = contextOfNow();
  private members: readonly Member[] | undefined;
  private joined: Joined | undefined;
  private items: readonly string[] | undefined;
  private readonly holders = new Map<string, HolderWatch>();
  private readonly slots = new Map<string, Slot>();
  private readonly owned = new Map<string, OwnedItemHandle>();
  /** What the last emission said this member owns (undefined before the first). */
  private emitted: ReadonlySet<string> | undefined;
  /** The membership the last emission carried. */
  private emittedMembers: readonly Member[] | undefined;
  private emitScheduled = false;
  private reconciling = false;
  private dirty = false;
  private finished = false;
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly resolved: ResolvedPartition,
    private readonly out: {
      next(assignment: Assignment): void;
      error(error: unknown): void;
      complete(): void;
    },
  ) {
    this.client = resolved.client;
    this.path = resolved.path;
  }

  start(): void {
    const { client, id, data } = this.resolved;
    const resolvedMembers = { client, path: membersPath(this.path), id, data };
    this.subscriptions.push(
      joinMembers(
        () => resolvedMembers,
        (joined) => {
          this.joined = joined;
          this.reconcile();
        },
      ).subscribe({
        next: (found) => {
          this.members = found;
          this.reconcile();
        },
        error: (error: unknown) => this.fail(error),
        complete: () => this.end('closed'),
      }),
    );
    if (this.finished) return;
    const source = this.resolved.items;
    if (Array.isArray(source)) this.setItems(source);
    else {
      this.subscriptions.push(
        (source as Observable<readonly string[]>).subscribe({
          next: (next) => {
            let checked: string[];
            try {
              checked = checkItems(next, this.path, 'partition');
            } catch (error) {
              this.fail(error);
              return;
            }
            this.setItems(checked);
          },
          error: (error: unknown) => this.fail(error),
          // The last set stays.
        }),
      );
    }
  }

  /** Unsubscribed: every item given up (signals abort, reason `left`), released, membership left. */
  stop(): void {
    this.shutdown('left');
  }

  private setItems(items: readonly string[]): void {
    if (this.finished) return;
    this.items = items;
    for (const [item, watch] of this.holders) {
      if (items.includes(item)) continue;
      watch.stop();
      this.holders.delete(item);
    }
    for (const item of items) {
      if (this.holders.has(item)) continue;
      this.holders.set(
        item,
        new HolderWatch(
          this.client,
          itemPath(this.path, item),
          () => this.reconcile(),
          (error) => this.fail(error),
        ),
      );
    }
    this.reconcile();
  }

  /** Acts on the current inputs; re-entrant calls (from the emissions it makes) run again after. */
  private reconcile(): void {
    if (this.finished) return;
    if (this.reconciling) {
      this.dirty = true;
      return;
    }
    this.reconciling = true;
    try {
      do {
        this.dirty = false;
        this.step();
      } while (this.dirty && !this.finished);
    } finally {
      this.reconciling = false;
    }
  }

  private isMember(): boolean {
    const joined = this.joined;
    return (
      joined !== undefined && this.members?.some((member) => member.czxid === joined.czxid) === true
    );
  }

  private step(): void {
    const items = this.items;
    if (items === undefined) return;
    // Items no longer in the set go, whatever else we know.
    const removed = [...this.slots.values()].filter((slot) => !items.includes(slot.item));
    if (removed.length > 0) this.giveUp(removed, 'removed');
    if (this.finished) return;
    if (!this.isMember()) {
      // Not (or no longer) in the membership: own nothing. Without a connected session, that is
      // because the session ended (its locks go with it); else our member node was deleted.
      const connected = isConnectedState(this.client.state);
      if (this.slots.size > 0)
        this.giveUp([...this.slots.values()], connected ? 'moved' : 'session-expired');
      return;
    }
    // Act only on a full picture of who holds what (a new member must not see every item free).
    for (const item of items) if (this.holders.get(item)?.holder === undefined) return;
    const target = this.target(items);
    const leaving = [...this.slots.values()].filter((slot) => target.get(slot.item) !== this.id);
    if (leaving.length > 0) this.giveUp(leaving, 'moved');
    if (this.finished) return;
    for (const item of items) {
      if (target.get(item) === this.id && !this.slots.has(item)) this.take(item);
    }
    // The first assignment, and a new membership even when this member's items stay.
    if (this.emitted === undefined || this.emittedMembers !== this.members) this.flush();
  }

  private get id(): string {
    return this.resolved.id;
  }

  /** The assignment from the members, the items and who holds each item now. */
  private target(items: readonly string[]): Map<string, string> {
    const members = this.members as readonly Member[];
    const bySession = new Map(members.map((member) => [member.sessionId, member.id]));
    const owners = new Map<string, string>();
    for (const item of items) {
      if (this.slots.get(item)?.state === 'held') {
        owners.set(item, this.id);
        continue;
      }
      const holder = this.holders.get(item)?.holder;
      if (!holder) continue;
      const owner =
        holder.sessionId === this.joined?.sessionId ? this.id : bySession.get(holder.sessionId);
      if (owner !== undefined) owners.set(item, owner);
    }
    return assign({ members: members.map((member) => member.id), items, owners });
  }

  /** Queues on the item's lock; `onHeld` adds it once held. */
  private take(item: string): void {
    const slot: Slot = { item, state: 'waiting', subscription: undefined, owned: undefined };
    this.slots.set(item, slot);
    const lockPath = itemPath(this.path, item);
    // Not re-entrant: every slot makes its own node, whatever async context it was started in.
    slot.subscription = mutex(this.client, lockPath, {
      data: this.id,
      onSuspended: this.resolved.onSuspended,
      reentrant: false,
    }).subscribe({
      next: (lease) => this.onHeld(slot, lease),
      error: (error: unknown) => this.onSlotError(slot, error),
      // The lease ended without a loss: the client is closing.
      complete: () => this.end('closed'),
    });
  }

  /** IN ONLY WHILE HELD: the lock's `next` is the one place an item enters `owned`. */
  private onHeld(slot: Slot, lease: Lease): void {
    if (this.finished || this.slots.get(slot.item) !== slot || slot.state !== 'waiting') return;
    slot.state = 'held';
    slot.owned = new OwnedItemHandle(slot.item, itemPath(this.path, slot.item), lease);
    this.owned.set(slot.item, slot.owned);
    this.scheduleFlush();
    this.reconcile();
  }

  private onSlotError(slot: Slot, error: unknown): void {
    if (this.finished || this.slots.get(slot.item) !== slot) return;
    this.slots.delete(slot.item);
    if (!LockLostError.isInstance(error)) {
      if (isZkError(error, ZkErrorCode.ClientClosed)) return this.end('closed');
      // No connection for longer than the client waits for one (a waiting slot's ConnectTimeout,
      // say): not the partition's failure. Queue again once connected (or once that wait ends).
      if (isZkError(error) && (error.isRetryable || transientCodes.includes(error.code))) {
        const retry = () => this.reconcile();
        this.client.connected().then(retry, retry);
        return;
      }
      return this.fail(error);
    }
    // The lock is gone already (or may be): out of the assignment at once; taken again if the
    // assignment still says so.
    const owned = slot.owned;
    if (owned) {
      this.owned.delete(slot.item);
      owned.end(new OwnershipEndedError(this.path, slot.item, error.reason, { cause: error }));
      this.scheduleFlush();
    }
    this.reconcile();
  }

  /**
   * OUT BEFORE RELEASED: each held item's signal aborts and an assignment without them is emitted
   * before any of their locks is released (after their tracked runs); waiting slots just leave
   * the queue.
   */
  private giveUp(slots: readonly Slot[], reason: OwnershipEndedReason, emit = true): void {
    const release: { slot: Slot; owned: OwnedItemHandle }[] = [];
    for (const slot of slots) {
      this.slots.delete(slot.item);
      const owned = slot.owned;
      if (!owned) {
        slot.subscription?.unsubscribe();
        continue;
      }
      this.owned.delete(slot.item);
      owned.end(new OwnershipEndedError(this.path, slot.item, reason));
      release.push({ slot, owned });
    }
    if (release.length === 0) return;
    if (emit) this.flush();
    for (const { slot, owned } of release) {
      const unsubscribe = () => slot.subscription?.unsubscribe();
      // Nothing tracked: released now, in this same turn. Otherwise once the runs settle; the
      // client's close waits for that.
      if (!owned.running) unsubscribe();
      else this.client.track(owned.settled().then(unsubscribe));
    }
  }

  private scheduleFlush(): void {
    if (this.emitScheduled) return;
    this.emitScheduled = true;
    queueMicrotask(() => {
      this.emitScheduled = false;
      if (!this.finished) this.flush();
    });
  }

  /** Emits the assignment if it changed since the last emission (or none was made yet). */
  private flush(): void {
    if (this.finished || !this.members) return;
    if (this.emitted === undefined && !this.isMember()) return;
    const now = [...this.owned.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const before = this.emitted;
    const same = before && before.size === now.length && now.every((item) => before.has(item));
    if (same && this.emittedMembers === this.members) return;
    this.emittedMembers = this.members;
    const added = now.filter((item) => !before?.has(item));
    const removed = before ? [...before].filter((item) => !this.owned.has(item)).sort() : [];
    this.emitted = new Set(now);
    const assignment: Assignment = {
      items: now,
      owned: new Map(now.map((item) => [item, this.owned.get(item) as OwnedItemHandle])),
      added,
      removed,
      members: this.members,
    };
    this.inContext(() => this.out.next(assignment));
  }

  /** Fails: every item given up (an emission without them first), membership left, error. */
  private fail(error: unknown): void {
    if (this.finished) return;
    this.giveUp([...this.slots.values()], 'left');
    this.shutdown('left');
    this.out.error(error);
  }

  /** The client closed: every item given up (its locks ended with the session), complete. */
  private end(reason: 'closed'): void {
    if (this.finished) return;
    this.giveUp([...this.slots.values()], reason);
    this.shutdown(reason);
    this.out.complete();
  }

  /** Gives every item up (signals abort with `reason`), releases, stops watching, leaves. */
  private shutdown(reason: OwnershipEndedReason): void {
    if (this.finished) return;
    this.finished = true;
    this.giveUp([...this.slots.values()], reason, false);
    for (const watch of this.holders.values()) watch.stop();
    this.holders.clear();
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
  }
}

/**
 * Spreads `items` over the members of the partition at `path`, each item owned by exactly one
 * member at a time: subscribing joins (as `id`), every emission is what this member owns now,
 * unsubscribing gives everything up and leaves.
 *
 * - **Never owned twice**: an item is in the assignment only while this member holds the item's
 *   lock (`<path>/items/<item>`, a zkrx mutex), and leaves it — its `signal` aborted, an emission
 *   without it — before the lock is released. Fencing tokens of an item strictly increase from
 *   owner to owner.
 * - **Balanced** when stable (⌊n/m⌋ or ⌈n/m⌉ each), **sticky and cooperative**: a change moves
 *   only what must move; an item that stays is never interrupted.
 * - A member that dies is replaced when its session expires; after an expiry of its own, a
 *   member joins again by itself. With `onSuspended: 'release'` (default) a suspended
 *   connection gives every item up at once.
 *
 * Every member must be given the same item set. The first emission comes once this member is in
 * the membership and has read who holds each item (often with no items yet). Errors:
 * `DuplicateMemberError` (the id is taken), ZkError `InvalidPath` / `BadArguments` for bad
 * input — before anything is sent, or for a bad set from `items` later (then after giving
 * everything up) —, the error of `items`, or a lock's permanent failure (`LockConflictError`,
 * `NoAuth`). Completes when the client closes.
 *
 * ## Example
 * ```ts
 * partition(client, '/fleet/shards', ['s0', 's1', 's2', 's3'], { id: 'worker-1' }).subscribe({
 *   next: ({ items, added }) => {
 *     console.log('mine:', items);
 *     for (const item of added) startShard(item); // stops when owned.get(item).signal aborts
 *   },
 *   error: (error) => console.error('left the fleet:', error),
 * });
 * // Output: mine: []
 * //         mine: [ 's0' ]
 * //         mine: [ 's0', 's1', 's2', 's3' ]
 * ```
 *
 * @param client The client whose session is the member.
 * @param path The partition's path (its members and its items' locks live under it).
 * @param items The items: an array, or an observable of the current set (the last set stays
 *   when it completes). Names of znodes, distinct.
 * @param options `id` (unique among the live members), `data`, `onSuspended`.
 * @return This member's assignment, on every change.
 */
export function partition(
  client: ZkClient,
  path: string,
  items: readonly string[] | Observable<readonly string[]>,
  options: PartitionOptions,
): Observable<Assignment> {
  return new Observable<Assignment>((subscriber) => {
    let resolved: ResolvedPartition;
    try {
      resolved = resolvePartition(client, path, items, options);
    } catch (error) {
      subscriber.error(error);
      return;
    }
    const engine = new PartitionEngine(resolved, {
      next: (assignment) => subscriber.next(assignment),
      error: (error) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
    engine.start();
    return () => engine.stop();
  });
}
