/**
 * `joinPartition`: a member's place in a partition as a value — joined at once, standing again
 * after a failure, with the latest assignment, runs kept in view, and a `leave()` that waits for
 * them. What the adapters (express `itemOwnerOnly`, nest `FleetService`) are wired to.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { isZkError, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { LeaseRuns, validateTimeout } from '@zkrx/lock/recipe';
import { isObservable, type Observable, ReplaySubject, Subject, type Subscription } from 'rxjs';
import type { PartitionProblemError } from './errors';
import { type MemberProblem, problemOf } from './member-record';
import {
  checkCallback,
  checkClient,
  checkOptionsObject,
  type PartitionOptions,
  resolvePartition,
  validatePartition,
} from './options';
import { type Assignment, partitionOf } from './partition';

/** How a member joins with `joinPartition`: `partition`'s options, and how it rides out a failure. */
export interface JoinPartitionOptions extends Omit<PartitionOptions, 'id'> {
  /**
   * This member's id: unique among the partition's live members. Default
   * `hostname:pid:<8 random hex digits>`, new for each process: a container restarted in the
   * same slot (same host name, pid 1) never finds its id held by its previous life's session.
   */
  id?: string;
  /**
   * After a failure to join (ZooKeeper unreachable at start, the id taken by a live member, no
   * access), the member owns nothing and joins again after a delay: `retryDelayMs` the first
   * time, doubled at each failure in a row up to `maxRetryDelayMs`, each drawn at random
   * between half and all of it (so that many members do not retry in step). Default 1000.
   */
  retryDelayMs?: number;
  /** The longest delay between two attempts to join. Default 30,000. */
  maxRetryDelayMs?: number;
}

/** A failure of a partition membership, as `errors$` tells it. */
export interface PartitionFailure {
  /**
   * What failed: the error the partition ended with (a `DuplicateMemberError`, a
   * `ReleaseTimeoutError`, a bad item set, no access...), or a `PartitionProblemError` the
   * member goes on through (a poison report not written...).
   */
  readonly error: unknown;
  /**
   * The member left the partition with `error` (it owns nothing now) and joins again in this
   * many ms; undefined for a problem it goes on through.
   */
  readonly retryInMs: number | undefined;
  /** Failures to stay in the partition in a row, this one included (0 for a problem). */
  readonly failures: number;
}

/** A member of a partition joined with `joinPartition`, until it leaves. */
export interface PartitionMembership {
  /**
   * Every failure, as it comes: each time the member leaves the partition with an error (and
   * when it joins again: `retryInMs`), and each problem it goes on through. Hot: a subscriber
   * hears what comes after it subscribed; the member's node shows its recent failures to
   * `inspectFleet` too. Completes once left.
   */
  readonly errors$: Observable<PartitionFailure>;
  /**
   * Resolves at the first assignment. Rejects if the first attempt failed (the member joins
   * again after `retryDelayMs` all the same), or with ZkError `ClientClosed` if the membership
   * ended first. Never an unhandled rejection: awaiting it is the caller's choice.
   */
  readonly joined: Promise<void>;
  /** The latest assignment; undefined before the first, after a failure, and once over. */
  readonly assignment: Assignment | undefined;
  /**
   * Replays the latest assignment, then every new one; completes once left or the client
   * closed.
   */
  readonly assignment$: Observable<Assignment>;
  /** Keeps `run` in view: `leave()` resolves only once it settled. Returns `run`. */
  track<T extends PromiseLike<unknown>>(run: T): T;
  /**
   * Leaves the partition: no more joining again, every item given up at once (their signals
   * abort with reason `left`), each item's lock released once the runs tracked on that item
   * settled. Resolves once the runs given to `track` settled. Idempotent.
   */
  leave(): Promise<void>;
  /** `leave()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

const what = 'joinPartition';
/** New for each process: the same host name and pid after a restart is not the same member. */
/**
 * This process's member id when none is given: `hostname:pid:<8 random hex digits>`, drawn once
 * per process. A restarted container usually has the same host name and pid (1) as its previous
 * life, whose member node may live on until its session expires: the random part keeps the two
 * apart.
 */
export const defaultMemberId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
const defaultRetryDelayMs = 1_000;
const defaultMaxRetryDelayMs = 30_000;

/**
 * The delay before attempt `failures + 1` after `failures` failures in a row: `base` doubled
 * each time up to `max`, then drawn between half and all of it (`random` in [0, 1)).
 *
 * ## Example
 * ```ts
 * console.log(retryDelay(3, 1_000, 30_000, () => 0.5));
 * // Output: 3000 (4000, drawn between 2000 and 4000)
 * ```
 */
export function retryDelay(
  failures: number,
  base: number,
  max: number,
  random: () => number = Math.random,
): number {
  const full = Math.min(max, base * 2 ** Math.max(0, failures - 1));
  return full / 2 + random() * (full / 2);
}

class Membership implements PartitionMembership {
  readonly joined: Promise<void>;
  private readonly assignments = new ReplaySubject<Assignment>(1);
  private readonly failuresSubject = new Subject<PartitionFailure>();
  readonly errors$ = this.failuresSubject.asObservable();
  /** When the current attempt began (ms, `Date.now()`). */
  private attemptedAt = 0;
  /** The last failure, shown on the member's node by the next attempt. */
  private lastFailure: MemberProblem | undefined;
  private readonly runs = new LeaseRuns();
  private latest: Assignment | undefined;
  private subscription: Subscription | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** Failures in a row (the next delay doubles with each). */
  private failures = 0;
  /**
   * An observable item set, subscribed once for the membership's life: each attempt to join
   * gets its latest set (a hot source is not subscribed again, and loses nothing).
   */
  private readonly itemSets: ReplaySubject<readonly string[]> | undefined;
  private itemsSubscription: Subscription | undefined;
  /** The item set's error: the membership ends with it (joining again cannot help). */
  private itemsFailed: { error: unknown } | undefined;
  /** Left, or the client closed: no more joining. */
  private over = false;
  /** Settles `joined`, until it is. */
  private settleJoined: { resolve(): void; reject(error: unknown): void } | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly items: readonly string[] | Observable<readonly string[]>,
    private readonly options: PartitionOptions,
    private readonly retryDelayMs: number,
    private readonly maxRetryDelayMs: number,
    private readonly onError: ((error: PartitionProblemError) => void) | undefined,
  ) {
    this.joined = new Promise<void>((resolve, reject) => {
      this.settleJoined = { resolve, reject };
    });
    this.joined.catch(() => {});
    if (isObservable(items)) {
      const sets = new ReplaySubject<readonly string[]>(1);
      this.itemSets = sets;
      this.itemsSubscription = items.subscribe({
        next: (set) => sets.next(set),
        error: (error: unknown) => {
          this.itemsFailed = { error };
          sets.error(error);
        },
      });
    }
    this.join();
  }

  get assignment(): Assignment | undefined {
    return this.over ? undefined : this.latest;
  }

  get assignment$(): Observable<Assignment> {
    return this.assignments.asObservable();
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    return this.runs.track(run);
  }

  leave(): Promise<void> {
    // Unsubscribing gives every item up at once; each lock goes once its item's runs settled.
    this.end(`partition ${this.path}: left before the first assignment`);
    return this.runs.settled();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.leave();
  }

  private join(): void {
    this.retry = undefined;
    if (this.over) return;
    const items = this.itemSets ?? this.items;
    this.attemptedAt = Date.now();
    const options: PartitionOptions = {
      ...this.options,
      onError: (error) => {
        this.failuresSubject.next({ error, retryInMs: undefined, failures: 0 });
        this.onError?.(error);
      },
    };
    const resolve = () => resolvePartition(this.client, this.path, items, options);
    this.subscription = partitionOf(resolve, this.lastFailure).subscribe({
      next: (assignment) => {
        this.latest = assignment;
        this.assignments.next(assignment);
        this.settleJoined?.resolve();
        this.settleJoined = undefined;
      },
      error: (error: unknown) => {
        // Could not join, or lost for good (a duplicate id, no access): owns nothing.
        this.latest = undefined;
        this.settleJoined?.reject(error);
        this.settleJoined = undefined;
        if (this.over) return;
        if (this.client.isClosed || isZkError(error, ZkErrorCode.ClientClosed)) {
          this.end(`partition ${this.path}: the client closed`);
          return;
        }
        if (this.itemsFailed) {
          this.end(`partition ${this.path}: the item set failed`);
          return;
        }
        // Failures in a row: an attempt that stayed in for the longest delay starts a new row
        // (not its first assignment: a member that fails soon after each is still failing).
        if (Date.now() - this.attemptedAt >= this.maxRetryDelayMs) this.failures = 0;
        this.failures += 1;
        const delay = retryDelay(this.failures, this.retryDelayMs, this.maxRetryDelayMs);
        this.lastFailure = problemOf('join', error, this.failures);
        this.retry = setTimeout(() => this.join(), delay);
        this.retry.unref?.();
        this.failuresSubject.next({ error, retryInMs: delay, failures: this.failures });
      },
      complete: () => this.end(`partition ${this.path}: the client closed`),
    });
  }

  /** Over: no more joining, every item given up, `joined` rejected if pending. Idempotent. */
  private end(why: string): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.settleJoined?.reject(new ZkError(ZkErrorCode.ClientClosed, why));
    this.settleJoined = undefined;
    this.subscription?.unsubscribe();
    this.itemsSubscription?.unsubscribe();
    this.latest = undefined;
    this.assignments.complete();
    this.failuresSubject.complete();
  }
}

/**
 * Joins the partition at `path` as a member and returns the membership at once: it owns its
 * share of `items` as `partition` gives it (`assignment`, `assignment$`), joins again after
 * a delay when joining fails (ZooKeeper unreachable at start, the id taken by a live member;
 * `retryDelayMs` doubled at each failure in a row up to `maxRetryDelayMs`, with jitter), and
 * lasts until `leave()` or the client closes. An observable `items` is subscribed once: every
 * attempt gets its latest set. `joined` resolves at the first
 * assignment.
 *
 * ## Example
 * ```ts
 * await using tenants = joinPartition(client, '/fleet/tenants', ['acme', 'globex'], {
 *   id: 'worker-1',
 * });
 * await tenants.joined;
 * for (const [tenant, owned] of tenants.assignment?.owned ?? []) {
 *   tenants.track(owned.track(syncTenant(tenant, { signal: owned.signal })));
 * }
 * ```
 *
 * @param client The client whose session is the membership.
 * @param path The partition's path, shared by every member.
 * @param items The items (the same set on every member), or an observable of the set.
 * @param options The member `id` (default `hostname:pid:<random>`), `data`, `onSuspended`,
 *   `releaseTimeoutMs`, `retryDelayMs`, `maxRetryDelayMs`.
 * @return The membership. Throws ZkError `BadArguments` / `InvalidPath` on bad input, before
 *   anything is sent.
 */
export function joinPartition(
  client: ZkClient,
  path: string,
  items: readonly string[] | Observable<readonly string[]>,
  options: JoinPartitionOptions = {},
): PartitionMembership {
  checkClient(client, what);
  const given = checkOptionsObject(options, what);
  const retryDelayMs = validateTimeout(given.retryDelayMs, 'retryDelayMs') ?? defaultRetryDelayMs;
  const maxRetryDelayMs =
    validateTimeout(given.maxRetryDelayMs, 'maxRetryDelayMs') ?? defaultMaxRetryDelayMs;
  const partitionOptions = { id: given.id ?? defaultMemberId } as PartitionOptions;
  if (given.releaseTimeoutMs !== undefined) {
    partitionOptions.releaseTimeoutMs = given.releaseTimeoutMs as number;
  }
  if (given.data !== undefined) partitionOptions.data = given.data as string;
  if (given.onSuspended !== undefined) {
    partitionOptions.onSuspended = given.onSuspended as PartitionOptions['onSuspended'];
  }
  const onError = checkCallback<(error: PartitionProblemError) => void>(
    given.onError,
    'onError',
    what,
  );
  validatePartition(path, items, partitionOptions);
  return new Membership(
    client,
    path,
    items,
    partitionOptions,
    retryDelayMs,
    Math.max(retryDelayMs, maxRetryDelayMs),
    onError,
  );
}
