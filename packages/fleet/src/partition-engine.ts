/**
 * Over 500 lines: the engine's two safety rules and every place that keeps them read as one.
 *
 * The engine of one partition subscription: this member's slots (one lock per item it wants or
 * has), what it emits, and the two rules its safety rests on (below, kept whole in this file).
 * Its inputs: its item set, its assignment node (assignment-view.ts), its own nodes
 * (member-presence.ts), its poison reports (poison.ts); the coordinator (coordinator.ts) runs
 * beside it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isConnectedState, isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type Lease, LockLostError, mutex } from '@zkrx/lock';
import { Observable, Subscription } from 'rxjs';
import { AssignmentView } from './assignment-view';
import { Coordinator } from './coordinator';
import {
  OwnershipEndedError,
  type OwnershipEndedReason,
  type PartitionProblemError,
  ReleaseTimeoutError,
} from './errors';
import { checkItemSet, compareNames, type ItemSet } from './item-set';
import { MemberPresence } from './member-presence';
import type { MemberProblem } from './member-record';
import { itemPath, type ResolvedPartition } from './options';
import { type OwnedItem, OwnedItemHandle } from './owned-item';
import { type PoisonedItem, PoisonReports, samePoison } from './poison';
import { MAX_WINDOW, TakeWindow } from './take-window';

/** What a member owns, emitted whenever that, or its poison items, change. */
export interface Assignment {
  /** The items this member owns now, sorted. */
  readonly items: readonly string[];
  /** Each owned item's token, signal and lock. */
  readonly owned: ReadonlyMap<string, OwnedItem>;
  /** Items owned now and not in the previous emission. */
  readonly added: readonly string[];
  /** Items in the previous emission and no longer owned (their signals have aborted). */
  readonly removed: readonly string[];
  /**
   * The items this member found poison — their lock failed for good (`NoAuth` on the item's
   * path, a `LockConflictError`...) — reported or not yet: who found each (this member), and the
   * error. No member owns them; this member tries each again now and then (after 1 s, 2 s, ...
   * up to a minute), and the fleet does once this member leaves. Every member's are listed by
   * `inspectFleet`.
   */
  readonly poisoned: ReadonlyMap<string, PoisonedItem>;
}

/** Errors of a lock that say "no connection now", not "this cannot work". */
const transientCodes: readonly string[] = [ZkErrorCode.ConnectTimeout, ZkErrorCode.SessionExpired];

const noPoison: ReadonlyMap<string, PoisonedItem> = new Map();

/**
 * The most items a member queues for at once: the others of its share are queued for as these
 * are held (or fail). What a lock in waiting costs its client (a subscription, a listing, a
 * watch) stays bounded when a share is large (10,000 items for a member of few), and one turn
 * of the event loop never starts thousands of acquisitions. The price: while all of them wait on
 * locks someone else holds (a member giving them up after its runs, for `releaseTimeoutMs` at
 * most; a session that ended, until it expires), the rest of the share waits too. Of these, at
 * most the take window's (take-window.ts) are on their way into their queues (not queued yet:
 * their requests are in the server's queues) — what keeps a thousand members starting at once
 * from burying the server. Liveness only: an item is still owned only under its lock.
 */
const TAKING_AT_ONCE = MAX_WINDOW;

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

/** Merges two sorted lists of names. */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const merged: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && compareNames(a[i] as string, b[j] as string) <= 0)) {
      merged.push(a[i++] as string);
    } else merged.push(b[j++] as string);
  }
  return merged;
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
 *   emitted — synchronously, in that order — and after the runs it tracks settled (or
 *   `releaseTimeoutMs` passed, and the member leaves the fleet). So no other member can hold the
 *   item while this one still says it owns it.
 *
 * A lock lost without a release (session expired, suspended, node deleted) is out of our hands:
 * the item leaves the assignment as soon as the lock tells (`onSlotError`), as a lease's signal
 * aborts. The assignment itself (who should try, written by the coordinator in our assignment
 * node) never decides who holds: a stale or wrong one costs a wasted wait.
 *
 * What each event costs this member: a read of its own assignment node, O(k) for its k items
 * (and O(n/8) to decode a bitmap); a lock's acquisition or loss, O(1) and one coalesced
 * emission, O(k). Nothing here is O(n) per change but a new item set (shared in the process).
 */
export class PartitionEngine {
  private readonly client: ZkClient;
  private readonly path: string;
  private readonly inContext = contextOfNow();
  /** The item set (shared by the members of this process given the same one); undefined until the first. */
  private set: ItemSet | undefined;
  /** Our assignment node as read, and what it gives for our set. */
  private readonly view = new AssignmentView();
  /** Our nodes: member node, assignment node, stored set, problems. */
  private presence: MemberPresence | undefined;
  /** Our own poison reports, and the map emitted (a new one only when they change). */
  private readonly poisonedHere: PoisonReports;
  private poisoned: ReadonlyMap<string, PoisonedItem> = noPoison;
  private readonly slots = new Map<string, Slot>();
  /** The items queued for and not held yet (at most TAKING_AT_ONCE). */
  private readonly waiting = new Set<string>();
  /** Of those, the ones whose node is not in their queue yet, and when each was started. */
  private readonly unqueued = new Map<string, number>();
  /** How many may be unqueued at once: opens while the server answers fast, halves when slow. */
  private readonly window: TakeWindow;
  /**
   * The rest of the target still to look at for queueing (undefined: all looked at). Each step
   * starts it again from the target's first item; a held lock goes on from where it stopped, so
   * taking a share of s items costs O(s) in all, not O(s) per lock.
   */
  private toTake: Iterator<string> | undefined;
  private fillScheduled = false;
  private readonly owned = new Map<string, OwnedItemHandle>();
  /** What the last emission said this member owns, sorted (undefined before the first). */
  private emitted: string[] | undefined;
  private emittedSet = new Set<string>();
  /** The poison items the last emission carried. */
  private emittedPoison: ReadonlyMap<string, PoisonedItem> | undefined;
  private coordinator: Coordinator | undefined;
  private emitScheduled = false;
  private reconcileScheduled = false;
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
    /** The failures of the membership before this attempt (`joinPartition`): shown on our node. */
    private readonly joinProblem?: MemberProblem,
  ) {
    this.client = resolved.client;
    this.path = resolved.path;
    this.window = new TakeWindow(this.client.sessionTimeoutMs / 10);
    this.poisonedHere = new PoisonReports(this.client, this.path, resolved.id, {
      changed: () => {
        this.updatePoisoned();
        this.scheduleReconcile();
      },
      problem: (error) => this.problem(error),
      resolved: (item) => this.presence?.resolve(`report-poison\u0000${item}`),
    });
  }

  private get id(): string {
    return this.resolved.id;
  }

  /** The item set first: a member joins only once it knows what it could be given. */
  start(): void {
    // `client.close()` begins: every item given up at once (signals abort, reason `closed`),
    // each lock released once its runs settled — close waits for those releases (up to the
    // client's closeTimeoutMs) before it ends the session, which would release them at once.
    const closing = this.client.closing;
    const onClosing = () => this.end('closed');
    closing.addEventListener('abort', onClosing, { once: true });
    this.subscriptions.push(
      new Subscription(() => closing.removeEventListener('abort', onClosing)),
    );
    const source = this.resolved.items;
    if (!(source instanceof Observable)) this.setItems(source);
    else {
      this.subscriptions.push(
        source.subscribe({
          next: (next) => {
            let checked: ItemSet;
            try {
              checked = checkItemSet(next, this.path, 'partition');
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

  /** Joins: our nodes (member, assignment, stored set), the coordinator's queue. */
  private join(set: ItemSet): void {
    const { client, id, data } = this.resolved;
    this.coordinator = new Coordinator(client, this.path, id, () => this.set, {
      failed: (error) => this.fail(error),
      problem: (error) => this.problem(error),
      resolved: (task) => this.presence?.resolve(task),
    });
    this.presence = new MemberPresence(
      client,
      this.path,
      id,
      data.toString('utf8'),
      this.joinProblem,
      {
        changed: () => this.reconcile(),
        assignment: (value) => {
          if (this.finished) return;
          this.view.read(value);
          // Counted, then no longer: its report was withdrawn (deleted): tried again.
          this.poisonedHere.listedAs(this.view.poison);
          this.reconcile();
        },
        failed: (error) => {
          if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) this.end('closed');
          else this.fail(error);
        },
        problem: (error) => this.problem(error),
      },
    );
    this.presence.start(set);
    if (this.finished) return;
    this.coordinator.start();
  }

  private setItems(set: ItemSet): void {
    if (this.finished) return;
    const first = this.set === undefined;
    this.set = set;
    this.view.setItems(set);
    // Items no longer in the set go, whatever else we know.
    const removed = [...this.slots.values()].filter((slot) => !set.has(slot.item));
    if (removed.length > 0) this.giveUp(removed, 'removed');
    for (const [item] of [...this.poisonedHere.reports()]) {
      if (!set.has(item)) this.poisonedHere.withdraw(item);
    }
    if (this.finished) return;
    if (first) this.join(set);
    else {
      this.presence?.setItems(set);
      this.coordinator?.changed();
    }
    this.reconcile();
  }

  /** The poison items found here (a new map only when they change: an emission says what changed). */
  private updatePoisoned(): void {
    const next = new Map<string, PoisonedItem>(this.poisonedHere.reports());
    const before = this.poisoned;
    if (next.size === before.size) {
      let same = true;
      for (const [item, report] of next) {
        const was = before.get(item);
        if (!was || !samePoison(was, report)) {
          same = false;
          break;
        }
      }
      if (same) return;
    }
    this.poisoned = next.size === 0 ? noPoison : next;
  }

  /** Something we go on through: told to `onError`, and shown on our member node. */
  private problem(error: PartitionProblemError): void {
    if (this.finished) return;
    this.presence?.problem(error);
    const onError = this.resolved.onError;
    if (onError) this.inContext(() => onError(error));
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

  /** One reconcile after the current turn (many locks can fail in one turn). */
  private scheduleReconcile(): void {
    if (this.reconcileScheduled) return;
    this.reconcileScheduled = true;
    queueMicrotask(() => {
      this.reconcileScheduled = false;
      this.reconcile();
    });
  }

  private step(): void {
    const set = this.set;
    if (set === undefined) return;
    if (!this.presence?.isIn) {
      // Not (or no longer) in: own nothing. Without a connected session, that is because the
      // session ended (its locks go with it); else our member or assignment node is gone.
      const connected = isConnectedState(this.client.state);
      this.toTake = undefined;
      if (this.slots.size > 0)
        this.giveUp([...this.slots.values()], connected ? 'moved' : 'session-expired');
      return;
    }
    const target = this.view.target;
    if (target !== undefined) {
      const leaving = [...this.slots.values()].filter((slot) => !target.has(slot.item));
      if (leaving.length > 0) this.giveUp(leaving, 'moved');
      if (this.finished) return;
      this.toTake = target.values();
      this.fill();
    } else this.toTake = undefined;
    // The first assignment, and new poison items even when our items stay.
    if (this.emitted === undefined || this.emittedPoison !== this.poisoned) this.flush();
  }

  /** Queues for the next items of the target, up to TAKING_AT_ONCE waiting, the window's unqueued. */
  private fill(): void {
    const set = this.set;
    const toTake = this.toTake;
    if (!set || !toTake) return;
    while (
      this.waiting.size < TAKING_AT_ONCE &&
      this.unqueued.size < this.window.limit &&
      !this.finished
    ) {
      const next = toTake.next();
      if (next.done) {
        this.toTake = undefined;
        return;
      }
      const item = next.value;
      if (!this.slots.has(item) && !this.poisonedHere.has(item) && set.has(item)) this.take(item);
    }
  }

  /** One fill after the current turn (many locks can be granted in one turn). */
  private scheduleFill(): void {
    if (this.fillScheduled || this.toTake === undefined) return;
    this.fillScheduled = true;
    queueMicrotask(() => {
      this.fillScheduled = false;
      if (!this.finished && this.presence?.isIn) this.fill();
    });
  }

  /** Queues on the item's lock; `onHeld` adds it once held. */
  private take(item: string): void {
    const slot: Slot = { item, state: 'waiting', subscription: undefined, owned: undefined };
    this.slots.set(item, slot);
    this.waiting.add(item);
    this.unqueued.set(item, performance.now());
    // Not re-entrant: every slot makes its own node, whatever async context it was started in.
    slot.subscription = mutex(this.client, itemPath(this.path, item), {
      data: this.id,
      onSuspended: this.resolved.onSuspended,
      reentrant: false,
      onQueued: () => this.onQueued(slot),
    }).subscribe({
      next: (lease) => this.onHeld(slot, lease),
      error: (error: unknown) => this.onSlotError(slot, error),
      // The lease ended without a loss: the client is closing.
      complete: () => this.end('closed'),
    });
  }

  /** The slot's node is in its queue: how long that took says how busy the server is. */
  private onQueued(slot: Slot): void {
    if (this.finished || this.slots.get(slot.item) !== slot) return;
    const startedAt = this.unqueued.get(slot.item);
    if (startedAt === undefined) return;
    this.unqueued.delete(slot.item);
    this.window.answered(startedAt, performance.now());
    this.scheduleFill();
  }

  /** IN ONLY WHILE HELD: the lock's `next` is the one place an item enters `owned`. */
  private onHeld(slot: Slot, lease: Lease): void {
    if (this.finished || this.slots.get(slot.item) !== slot || slot.state !== 'waiting') return;
    this.unqueued.delete(slot.item);
    slot.state = 'held';
    slot.owned = new OwnedItemHandle(slot.item, itemPath(this.path, slot.item), lease);
    this.owned.set(slot.item, slot.owned);
    this.scheduleFlush();
    // Room to queue for the next ones of our share.
    this.waiting.delete(slot.item);
    this.scheduleFill();
  }

  private onSlotError(slot: Slot, error: unknown): void {
    if (this.finished || this.slots.get(slot.item) !== slot) return;
    this.slots.delete(slot.item);
    if (this.waiting.delete(slot.item)) this.scheduleReconcile();
    if (this.unqueued.delete(slot.item)) this.scheduleFill();
    const owned = slot.owned;
    if (!LockLostError.isInstance(error)) {
      if (isZkError(error, ZkErrorCode.ClientClosed)) return this.end('closed');
      // No connection for longer than the client waits for one (a waiting slot's ConnectTimeout,
      // say): not the partition's failure. Queue again once connected (or once that wait ends).
      if (isZkError(error) && (error.isRetryable || transientCodes.includes(error.code))) {
        this.window.congested(performance.now());
        const retry = () => this.scheduleReconcile();
        this.client.connected().then(retry, retry);
        return;
      }
      // The lock fails for good on this item (NoAuth on its path, a lock of another kind there):
      // the item is poison. Reported, left unowned; everything else goes on.
      if (owned) {
        this.owned.delete(slot.item);
        owned.end(new OwnershipEndedError(this.path, slot.item, 'removed', { cause: error }));
        this.scheduleFlush();
      }
      this.poisonedHere.report(slot.item, error);
      return;
    }
    // The lock is gone already (or may be): out of the assignment at once; taken again if the
    // assignment still says so.
    if (owned) {
      this.owned.delete(slot.item);
      owned.end(new OwnershipEndedError(this.path, slot.item, error.reason, { cause: error }));
      this.scheduleFlush();
    }
    this.scheduleReconcile();
  }

  /**
   * OUT BEFORE RELEASED: each held item's signal aborts and an assignment without them is emitted
   * before any of their locks is released (after their tracked runs, for `releaseTimeoutMs` at
   * most); waiting slots just leave the queue.
   */
  private giveUp(slots: readonly Slot[], reason: OwnershipEndedReason, emit = true): void {
    const release: { slot: Slot; owned: OwnedItemHandle }[] = [];
    for (const slot of slots) {
      this.slots.delete(slot.item);
      this.waiting.delete(slot.item);
      this.unqueued.delete(slot.item);
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
      // Nothing tracked: released now, in this same turn. Otherwise once the runs settle (or the
      // bound passes); the client's close waits for that.
      if (!owned.running) unsubscribe();
      else this.client.track(this.afterRuns(slot.item, owned).then(unsubscribe));
    }
  }

  /** Resolves once `owned`'s runs settled, or `releaseTimeoutMs` later: then the member leaves. */
  private afterRuns(item: string, owned: OwnedItemHandle): Promise<void> {
    const limit = this.resolved.releaseTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), limit);
    });
    return Promise.race([owned.settled().then(() => false), timedOut]).then((late) => {
      clearTimeout(timer);
      if (late) this.fail(new ReleaseTimeoutError(this.path, item, limit));
    });
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
    if (this.finished) return;
    if (this.emitted === undefined && !this.presence?.isIn) return;
    const before = this.emittedSet;
    const added: string[] = [];
    for (const item of this.owned.keys()) if (!before.has(item)) added.push(item);
    const removed: string[] = [];
    for (const item of before) if (!this.owned.has(item)) removed.push(item);
    if (
      this.emitted !== undefined &&
      added.length === 0 &&
      removed.length === 0 &&
      this.emittedPoison === this.poisoned
    ) {
      return;
    }
    added.sort(compareNames);
    removed.sort(compareNames);
    const gone = new Set(removed);
    const kept =
      removed.length === 0
        ? (this.emitted ?? [])
        : (this.emitted ?? []).filter((item) => !gone.has(item));
    const now = added.length === 0 ? kept.slice() : mergeSorted(kept, added);
    this.emitted = now;
    this.emittedSet = new Set(now);
    this.emittedPoison = this.poisoned;
    const assignment: Assignment = {
      items: now,
      owned: new Map(now.map((item) => [item, this.owned.get(item) as OwnedItemHandle])),
      added,
      removed,
      poisoned: this.poisoned,
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
    this.coordinator?.stop();
    this.poisonedHere.stop();
    this.presence?.stop();
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
  }
}
