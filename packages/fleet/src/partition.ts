/**
 * `partition`: a sticky, cooperative work partitioner. One member, the coordinator
 * (coordinator.ts), writes the assignment; every member takes its share one lock per item. An
 * item is in a member's assignment only while it holds that item's lock, and leaves it before
 * the lock is released.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  isConnectedState,
  isZkError,
  joinPath,
  type NodeData,
  type ZkClient,
  ZkErrorCode,
} from '@zkrx/core';
import { type Lease, LockLostError, mutex } from '@zkrx/lock';
import { Observable, Subscription } from 'rxjs';
import {
  type AssignmentRecord,
  decodeAssignment,
  itemSetDigest,
  itemsGiven,
  ownersOf,
} from './assignment-record';
import { Coordinator } from './coordinator';
import {
  OwnershipEndedError,
  type OwnershipEndedReason,
  type PartitionProblemError,
  ReleaseTimeoutError,
} from './errors';
import { encodeMemberRecord, type MemberProblem, problemOf } from './member-record';
import { type GroupJoin, type Joined, joinMembers, type Member } from './members';
import {
  checkItems,
  compareNames,
  itemPath,
  membersPath,
  type PartitionOptions,
  type ResolvedPartition,
  resolvePartition,
} from './options';
import { type OwnedItem, OwnedItemHandle } from './owned-item';
import { type PoisonedItem, PoisonReports, samePoison } from './poison';

/** What a member owns, emitted whenever that, the membership or the poison items change. */
export interface Assignment {
  /** The items this member owns now, sorted. */
  readonly items: readonly string[];
  /** Each owned item's token, signal and lock. */
  readonly owned: ReadonlyMap<string, OwnedItem>;
  /** Items owned now and not in the previous emission. */
  readonly added: readonly string[];
  /** Items in the previous emission and no longer owned (their signals have aborted). */
  readonly removed: readonly string[];
  /** The live members as this member sees them, in id order. */
  readonly members: readonly Member[];
  /**
   * Items no member owns because their lock failed for good (`NoAuth` on the item's path, a
   * `LockConflictError`...): those the coordinator's last assignment lists, and those this
   * member found (listed or not yet, its report written or not): who found each, and the error.
   * The member that found one tries it again now and then (after 1 s, 2 s, ... up to a minute),
   * and so does the fleet once that member leaves.
   */
  readonly poisoned: ReadonlyMap<string, PoisonedItem>;
}

/** Errors of a lock that say "no connection now", not "this cannot work". */
const transientCodes: readonly string[] = [ZkErrorCode.ConnectTimeout, ZkErrorCode.SessionExpired];

const noOwners: ReadonlyMap<string, string> = new Map();
const noPoison: ReadonlyMap<string, PoisonedItem> = new Map();

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
 * aborts. The assignment itself (who should try, written by the coordinator) never decides who
 * holds: a stale or wrong one costs a wasted wait.
 *
 * What each event costs this member: an assignment read, O(n) to find its items in it and O(k)
 * for its own k items; a lock's acquisition or loss, O(1) and one coalesced emission, O(k).
 */
class PartitionEngine {
  private readonly client: ZkClient;
  private readonly path: string;
  private readonly inContext = contextOfNow();
  private members: readonly Member[] | undefined;
  private joined: Joined | undefined;
  /** The item set, sorted, and its digest; undefined until the first. */
  private items: readonly string[] | undefined;
  private itemSet: ReadonlySet<string> = new Set();
  private digest = '';
  /** `<path>/members` as last read: its data version, data and the assignment in it. */
  private node: { version: number; data: Buffer; record: AssignmentRecord | undefined } | undefined;
  /** The last assignment this member could read (its item set was ours then), and that set. */
  private lastGood: { record: AssignmentRecord; items: readonly string[] } | undefined;
  private lastGoodOwners: { record: AssignmentRecord; owners: Map<string, string> } | undefined;
  /** What the assignment gives this member; undefined: keep what it has, take nothing new. */
  private target: ReadonlySet<string> | undefined;
  /** The poison items of the assignment and of our own reports (a new map only when they change). */
  private poisoned: ReadonlyMap<string, PoisonedItem> = noPoison;
  /** Items whose lock failed for good here: reported (and tried again now and then). */
  private readonly poisonedHere: PoisonReports;
  /** Our member node, kept by the membership (to show our problems on it). */
  private groupJoin: GroupJoin | undefined;
  /** What we go through now, by task and item (shown on our member node, told to `onError`). */
  private readonly problems = new Map<string, MemberProblem>();
  private readonly slots = new Map<string, Slot>();
  private readonly owned = new Map<string, OwnedItemHandle>();
  /** What the last emission said this member owns, sorted (undefined before the first). */
  private emitted: string[] | undefined;
  private emittedSet = new Set<string>();
  /** The membership and poison items the last emission carried. */
  private emittedMembers: readonly Member[] | undefined;
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
    this.poisonedHere = new PoisonReports(this.client, this.path, resolved.id, {
      changed: () => {
        this.updatePoisoned();
        this.scheduleReconcile();
      },
      problem: (error) => this.problem(error),
      resolved: (item) => this.resolve(`report-poison\u0000${item}`),
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

  /** Joins: the member node, the assignment's watch, the coordinator's queue. */
  private join(): void {
    const { client, id, data } = this.resolved;
    // Ids only: assigning needs who is in, not what each member's node holds (no read per member).
    const resolvedMembers = {
      client,
      path: membersPath(this.path),
      id,
      data: this.memberData(),
      details: false,
    };
    this.coordinator = new Coordinator(
      client,
      this.path,
      id,
      {
        members: () => this.members,
        items: () => (this.items ? { items: this.items, digest: this.digest } : undefined),
        assignmentNode: () => this.node,
        previousOwners: () => this.previousOwners(),
      },
      (error) => this.fail(error),
      (error) => this.problem(error),
      (task) => this.resolve(task),
    );
    this.subscriptions.push(
      joinMembers(
        () => resolvedMembers,
        (joined) => {
          this.joined = joined;
          this.reconcile();
        },
        (join) => {
          this.groupJoin = join;
        },
      ).subscribe({
        next: (found) => {
          this.members = found;
          this.coordinator?.changed();
          this.reconcile();
        },
        error: (error: unknown) => this.fail(error),
        complete: () => this.end('closed'),
      }),
    );
    if (this.finished) return;
    this.subscriptions.push(
      client.watchData(membersPath(this.path)).subscribe({
        next: (value) => this.onAssignmentNode(value),
        error: (error: unknown) => {
          if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) this.end('closed');
          else this.fail(error);
        },
      }),
    );
    if (this.finished) return;
    this.coordinator.start();
  }

  private setItems(items: readonly string[]): void {
    if (this.finished) return;
    const first = this.items === undefined;
    this.items = items;
    this.itemSet = new Set(items);
    this.digest = itemSetDigest(items);
    // Items no longer in the set go, whatever else we know.
    const removed = [...this.slots.values()].filter((slot) => !this.itemSet.has(slot.item));
    if (removed.length > 0) this.giveUp(removed, 'removed');
    for (const [item] of [...this.poisonedHere.reports()]) {
      if (!this.itemSet.has(item)) this.poisonedHere.withdraw(item);
    }
    if (this.finished) return;
    this.updateTarget();
    if (first) this.join();
    else this.coordinator?.changed();
    this.reconcile();
  }

  private onAssignmentNode(value: NodeData | null): void {
    if (this.finished) return;
    this.node = value
      ? { version: value.stat.version, data: value.data, record: decodeAssignment(value.data) }
      : undefined;
    const record = this.node?.record;
    // Listed, then no longer: its report was withdrawn (deleted): tried again.
    if (record) this.poisonedHere.listedAs(record.poison);
    this.updateTarget();
    this.coordinator?.changed();
    this.reconcile();
  }

  /** What the last assignment gives this member, if it was computed for our item set. */
  private updateTarget(): void {
    const record = this.node?.record;
    const items = this.items;
    if (!record || !items) {
      this.target = undefined;
      return;
    }
    const given = itemsGiven(record, this.id, items, this.digest);
    if (given === undefined) {
      this.target = undefined;
      return;
    }
    this.target = new Set(given);
    this.lastGood = { record, items };
    this.updatePoisoned();
  }

  /**
   * The poison items of the last good assignment and of our own reports: the same map as before
   * when nothing in it changed (an emission says what changed, and only then).
   */
  private updatePoisoned(): void {
    const next = new Map<string, PoisonedItem>(Object.entries(this.lastGood?.record.poison ?? {}));
    for (const [item, report] of this.poisonedHere.reports()) {
      if (!next.has(item)) next.set(item, report);
    }
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

  /** Our member node's data: our `data`, and our problems (one a task: the latest, and how many). */
  private memberData(): Buffer {
    const byTask = new Map<string, MemberProblem>();
    for (const problem of this.problems.values()) {
      const seen = byTask.get(problem.task);
      byTask.set(problem.task, {
        ...(seen && seen.at > problem.at ? seen : problem),
        count: (seen?.count ?? 0) + 1,
      });
    }
    const problems = [...(this.joinProblem ? [this.joinProblem] : []), ...byTask.values()];
    return encodeMemberRecord({ data: this.resolved.data.toString('utf8'), problems });
  }

  /** Something we go on through: told to `onError`, and shown on our member node. */
  private problem(error: PartitionProblemError): void {
    if (this.finished) return;
    const key = `${error.task}\u0000${error.item ?? ''}`;
    const count = (this.problems.get(key)?.count ?? 0) + 1;
    this.problems.set(key, problemOf(error.task, error, count));
    this.groupJoin?.update(this.memberData());
    const onError = this.resolved.onError;
    if (onError) this.inContext(() => onError(error));
  }

  /** A problem is over (`key`: its task, or its task and item). */
  private resolve(key: string): void {
    const full = key.includes('\u0000') ? key : `${key}\u0000`;
    if (!this.problems.delete(full) || this.finished) return;
    this.groupJoin?.update(this.memberData());
  }

  /** The owners-to-be of the last assignment we could read (for the coordinator). */
  private previousOwners(): ReadonlyMap<string, string> {
    const good = this.lastGood;
    if (!good) return noOwners;
    if (this.lastGoodOwners?.record !== good.record) {
      this.lastGoodOwners = { record: good.record, owners: ownersOf(good.record, good.items) };
    }
    return this.lastGoodOwners.owners;
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

  private isMember(): boolean {
    // Our node exists while `joined` is set (the join's own watch on it says when it goes), and
    // a listing that shows our id was read after our create or shows a node our id had before
    // whose deletion that listing predates: in both cases the others see (or will see) us.
    return (
      this.joined !== undefined && this.members?.some((member) => member.id === this.id) === true
    );
  }

  private step(): void {
    if (this.items === undefined) return;
    if (!this.isMember()) {
      // Not (or no longer) in the membership: own nothing. Without a connected session, that is
      // because the session ended (its locks go with it); else our member node was deleted.
      const connected = isConnectedState(this.client.state);
      if (this.slots.size > 0)
        this.giveUp([...this.slots.values()], connected ? 'moved' : 'session-expired');
      return;
    }
    const target = this.target;
    if (target !== undefined) {
      const leaving = [...this.slots.values()].filter((slot) => !target.has(slot.item));
      if (leaving.length > 0) this.giveUp(leaving, 'moved');
      if (this.finished) return;
      for (const item of target) {
        if (!this.slots.has(item) && !this.poisonedHere.has(item) && this.itemSet.has(item)) {
          this.take(item);
        }
      }
    }
    // The first assignment, and a new membership or poison list even when our items stay.
    if (
      this.emitted === undefined ||
      this.emittedMembers !== this.members ||
      this.emittedPoison !== this.poisoned
    ) {
      this.flush();
    }
  }

  /** Queues on the item's lock; `onHeld` adds it once held. */
  private take(item: string): void {
    const slot: Slot = { item, state: 'waiting', subscription: undefined, owned: undefined };
    this.slots.set(item, slot);
    // Not re-entrant: every slot makes its own node, whatever async context it was started in.
    slot.subscription = mutex(this.client, itemPath(this.path, item), {
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
  }

  private onSlotError(slot: Slot, error: unknown): void {
    if (this.finished || this.slots.get(slot.item) !== slot) return;
    this.slots.delete(slot.item);
    const owned = slot.owned;
    if (!LockLostError.isInstance(error)) {
      if (isZkError(error, ZkErrorCode.ClientClosed)) return this.end('closed');
      // No connection for longer than the client waits for one (a waiting slot's ConnectTimeout,
      // say): not the partition's failure. Queue again once connected (or once that wait ends).
      if (isZkError(error) && (error.isRetryable || transientCodes.includes(error.code))) {
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
    if (this.finished || !this.members) return;
    if (this.emitted === undefined && !this.isMember()) return;
    const before = this.emittedSet;
    const added: string[] = [];
    for (const item of this.owned.keys()) if (!before.has(item)) added.push(item);
    const removed: string[] = [];
    for (const item of before) if (!this.owned.has(item)) removed.push(item);
    if (
      this.emitted !== undefined &&
      added.length === 0 &&
      removed.length === 0 &&
      this.emittedMembers === this.members &&
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
    this.emittedMembers = this.members;
    this.emittedPoison = this.poisoned;
    const assignment: Assignment = {
      items: now,
      owned: new Map(now.map((item) => [item, this.owned.get(item) as OwnedItemHandle])),
      added,
      removed,
      members: this.members,
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
  return partitionOf(() => resolvePartition(client, path, items, options));
}

/**
 * `partition` from options resolved when subscribed (which may throw: the observable's error);
 * `joinProblem`: the failures before this attempt (`joinPartition`), shown on the member's node.
 */
export function partitionOf(
  resolve: () => ResolvedPartition,
  joinProblem?: MemberProblem,
): Observable<Assignment> {
  return new Observable<Assignment>((subscriber) => {
    let resolved: ResolvedPartition;
    try {
      resolved = resolve();
    } catch (error) {
      subscriber.error(error);
      return;
    }
    const engine = new PartitionEngine(
      resolved,
      {
        next: (assignment) => subscriber.next(assignment),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      },
      joinProblem,
    );
    engine.start();
    return () => engine.stop();
  });
}
