/**
 * The worker side of the fleet mode: one member of a `@zkrx/fleet` partition. The coordinator
 * says when it joins (subscribes), leaves (unsubscribes) and what the item set is; the member
 * reports each item as a hold (from the emission that added it to its signal's abort, or the
 * emission that removed it, whichever first) and writes each owned item's fenced register with
 * the item's token until the item is no longer owned.
 */
import type { ZkClient } from '@zkrx/core';
import { type Assignment, type OwnedItem, OwnershipEndedError, partition } from '@zkrx/fleet';
import { BehaviorSubject, type Subscription } from 'rxjs';
import { mono } from './clock';
import type {
  CoordinatorMessage,
  FleetWorkerConfig,
  HoldStart,
  WorkerCounters,
  WorkerMessage,
  WriteRequest,
} from './protocol';
import type { Random } from './random';

/** What the member needs of its worker process. */
export interface MemberContext {
  readonly client: ZkClient;
  readonly index: number;
  readonly fleet: FleetWorkerConfig;
  readonly random: Random;
  readonly counters: WorkerCounters;
  /** Holds in progress, by id: the stall aims at a worker that holds. */
  readonly holding: Set<string>;
  send(message: WorkerMessage): void;
  writeRegister(writes: readonly WriteRequest[]): Promise<readonly boolean[]>;
  nextHoldId(): string;
  /** Called after each hold begins (a pending stall aims at it). */
  held(): void;
  describe(error: unknown): string;
}

/** Reasons an item ends that are a loss of its lock, not a giving up. */
const LOSSES: readonly string[] = ['suspended', 'session-expired', 'node-deleted'];

/** One item as this member believes it owns it. */
interface Believed {
  readonly holdId: string;
  readonly owned: OwnedItem;
  /** Aborted when the belief ends: the register writes stop. */
  readonly stop: AbortController;
  /** Its signal aborted (a `broken-fleet` member believes on a while after). */
  aborted: boolean;
  ended: boolean;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * A partition member driven by the coordinator's `join`, `leave` and `items` commands.
 * `lateMs` (the `broken-fleet` control) makes it keep believing it owns an item that long after
 * giving it up, without holding the release back: it owns items after their locks are released.
 */
export class PartitionMember {
  private readonly items$: BehaviorSubject<readonly string[]>;
  private subscription: Subscription | undefined;
  /** When this membership began (subscribe) and when the client's session began. */
  private joinedAt = 0;
  private sessionSince = mono();
  private sessionId: string | undefined;
  private readonly believed = new Map<string, Believed>();
  /** `slow-fleet`: items held and not believed yet. */
  private readonly slow = new Set<OwnedItem>();
  private readonly sessionWatch: Subscription;
  private stopped = false;

  constructor(private readonly context: MemberContext) {
    this.items$ = new BehaviorSubject<readonly string[]>(context.fleet.items);
    this.sessionWatch = context.client.session$.subscribe(({ sessionId }) => {
      if (sessionId !== undefined && sessionId !== this.sessionId) {
        this.sessionId = sessionId;
        this.sessionSince = mono();
      }
    });
  }

  command(message: CoordinatorMessage): void {
    if (this.stopped) return;
    switch (message.type) {
      case 'join':
        this.join();
        break;
      case 'leave':
        this.leave();
        break;
      case 'items':
        // stale-fleet: the replacement goes on with the set it had.
        if (message.deploy && this.context.fleet.stale) break;
        this.items$.next(message.items);
        break;
      default:
        break;
    }
  }

  private join(): void {
    if (this.subscription) return;
    const { client, fleet } = this.context;
    this.joinedAt = mono();
    this.subscription = partition(client, fleet.path, this.items$, { id: fleet.id }).subscribe({
      next: (assignment) => this.onAssignment(assignment),
      error: (error: unknown) => {
        // A partition that errors has left the fleet: a failure of the recipe under test.
        this.subscription = undefined;
        this.context.send({
          type: 'fatal',
          at: mono(),
          error: `partition errored: ${this.context.describe(error)} ${error instanceof Error ? error.message : ''}`,
        });
      },
      complete: () => {
        this.subscription = undefined;
      },
    });
  }

  private leave(): void {
    const subscription = this.subscription;
    if (!subscription) return;
    this.subscription = undefined;
    // Unsubscribing aborts every owned item's signal (reason `left`) before releasing.
    subscription.unsubscribe();
  }

  /** Leaves (if a member) and stops; the holds still believed end now. */
  stop(): void {
    if (this.stopped) return;
    this.leave();
    this.stopped = true;
    this.sessionWatch.unsubscribe();
    for (const [item, belief] of this.believed) {
      this.end(item, belief, mono(), 'released', 'stopped');
    }
  }

  private onAssignment(assignment: Assignment): void {
    const now = mono();
    // Out: items no longer in the emission (their signals aborted first, so ended already; an
    // item removed without its signal aborted is ended here, at the emission).
    for (const [item, belief] of this.believed) {
      const owned = assignment.owned.get(item);
      if (owned === belief.owned || belief.aborted) continue;
      if (!belief.ended) {
        this.context.send({
          type: 'note',
          at: now,
          text: `${item} left the assignment without its signal aborted`,
        });
      }
      this.end(item, belief, now, 'released', 'removed-without-abort');
    }
    // In: items new to this member, or owned anew (another lock, another token).
    const slowMs = this.context.fleet.slowMs;
    for (const [item, owned] of assignment.owned) {
      if (this.believed.get(item)?.owned === owned) continue;
      if (slowMs === undefined) this.begin(item, owned, now);
      else if (!this.slow.has(owned)) {
        // slow-fleet: believed only `slowMs` later, if still held then (never believed after
        // the item's signal aborted: its lock may be someone else's by then).
        this.slow.add(owned);
        setTimeout(() => {
          this.slow.delete(owned);
          if (!this.stopped && !owned.signal.aborted && !this.believed.has(item)) {
            this.begin(item, owned, mono());
          }
        }, slowMs);
      }
    }
  }

  private begin(item: string, owned: OwnedItem, at: number): void {
    const { context } = this;
    const holdId = context.nextHoldId();
    const start: HoldStart = {
      holdId,
      group: holdId,
      resource: owned.path,
      kind: 'exclusive',
      node: owned.node,
      token: owned.fencingToken,
      sessionId: this.sessionId,
      at,
      // The item's lock was asked for within this membership, on this session.
      attemptAt: Math.max(this.joinedAt, this.sessionSince),
    };
    context.send({ type: 'acquired', ...start });
    context.counters.acquisitions += 1;
    const belief: Believed = {
      holdId,
      owned,
      stop: new AbortController(),
      aborted: false,
      ended: false,
    };
    this.believed.set(item, belief);
    context.holding.add(holdId);
    const lateMs = context.fleet.lateMs;
    const why = () => {
      const reason: unknown = owned.signal.reason;
      return OwnershipEndedError.isInstance(reason)
        ? `OwnershipEndedError:${reason.reason}`
        : context.describe(reason);
    };
    const onAbort = () => {
      belief.aborted = true;
      const reason = why();
      const how = LOSSES.some((loss) => reason.endsWith(`:${loss}`)) ? 'lost' : 'released';
      if (lateMs === undefined) this.end(item, belief, mono(), how, reason);
      else {
        // broken-fleet: the lock is released at once (nothing tracked), the belief goes on.
        setTimeout(() => this.end(item, belief, mono(), how, reason), lateMs);
      }
    };
    if (owned.signal.aborted) {
      // Handed over already given up: never believed.
      this.end(item, belief, at, 'lost', why(), true);
      return;
    }
    owned.signal.addEventListener('abort', onAbort, { once: true });
    const work = this.work(belief);
    // A well-behaved member has its work waited for before the item's lock is released.
    if (lateMs === undefined) owned.track(work);
    context.held();
  }

  /** Writes the item's fenced register with its token until the belief ends. */
  private async work(belief: Believed): Promise<void> {
    const { context } = this;
    const signal = belief.stop.signal;
    while (!signal.aborted) {
      const accepted = await context.writeRegister([
        { holdId: belief.holdId, resource: belief.owned.path, token: belief.owned.fencingToken },
      ]);
      context.counters.writes += 1;
      context.counters.rejectedWrites += accepted.filter((ok) => !ok).length;
      // 40 to 120 ms an item with a few items; with many, the member's writes stay about as
      // many a second (a thousand items would write tens of thousands of times a second).
      const spread = Math.max(1, this.believed.size / 3);
      await abortableSleep(Math.round(context.random.int(40, 120) * spread), signal);
    }
  }

  private end(
    item: string,
    belief: Believed,
    at: number,
    how: 'released' | 'lost',
    reason: string,
    onArrival = false,
  ): void {
    if (this.believed.get(item) === belief) this.believed.delete(item);
    if (belief.ended) return;
    belief.ended = true;
    belief.stop.abort();
    this.context.holding.delete(belief.holdId);
    this.context.send({
      type: 'ended',
      holdId: belief.holdId,
      at,
      how,
      reason,
      ...(onArrival ? { onArrival } : {}),
    });
  }
}
