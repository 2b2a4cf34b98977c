/**
 * FleetService: this application's memberships in @zkrx/fleet partitions, one per path, joined
 * once and left when the application shuts down — after the per-item runs in flight settle.
 */
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ZkError, ZkErrorCode, ZkrxError } from '@zkrx/core';
import {
  type Assignment,
  defaultMemberId,
  type OwnedItem,
  type PartitionOptions,
  validatePartition,
} from '@zkrx/fleet';
import { defer, from, isObservable, NEVER, type Observable, of, tap } from 'rxjs';
import { ZK_CONNECTION } from '../connection/tokens';
import type { Membership, ZkConnection } from '../connection/zk-connection';

/**
 * How this application joins a partition (`id` defaults to the module's `id`, else @zkrx/fleet's
 * `defaultMemberId`: `hostname:pid:<random>`, never a previous life's).
 */
export type FleetJoinOptions = Partial<PartitionOptions>;

/**
 * A partition's items: the set (the same on every instance), an observable of the set, a promise
 * of it (items read from a database at start), or a function returning any of these — called
 * when the partition is joined, and again each time it is joined again after a failure.
 */
export type FleetItems =
  | readonly string[]
  | Observable<readonly string[]>
  | PromiseLike<readonly string[]>
  | (() => readonly string[] | Observable<readonly string[]> | PromiseLike<readonly string[]>);

/** Options of `forEachOwned` (and `@ForEachOwnedItem`). */
export interface ForEachOwnedOptions {
  /** How many owned items run at once on this application (default 10; `Infinity`: all). */
  concurrency?: number;
  /**
   * With a `job` name (the decorator gives `Class.method`): an item whose previous run of that
   * job is still in flight — or still waiting for its turn — is skipped this time (`overlap:
   * 'skip'`, the default), so that a slow tick never runs an item beside itself.
   */
  job?: string;
  /** With `job`: `skip` (default) or `allow` a run of an item beside its previous one. */
  overlap?: 'skip' | 'allow';
}

/**
 * Some per-item runs of `forEachOwned` (or a `@ForEachOwnedItem` call) failed: every failure,
 * with its item, once every run settled (`cause` is the first). The other items ran.
 */
export class OwnedItemsError extends ZkrxError<'OwnedItemsFailed'> {
  protected static override readonly marker = '@zkrx/nestjs.OwnedItemsError';
  declare static readonly isInstance: (value: unknown) => value is OwnedItemsError;
  override readonly name = 'OwnedItemsError';

  constructor(
    readonly path: string,
    /** Each failed item and its error, in item order. */
    readonly failures: readonly { readonly item: string; readonly error: unknown }[],
  ) {
    const first = failures[0]?.error as { message?: unknown } | undefined;
    const items = failures.map(({ item }) => item).join(', ');
    super(
      'OwnedItemsFailed',
      `${failures.length} item${failures.length === 1 ? '' : 's'} of ${path} failed: ${items} (first: ${String(first?.message ?? first)})`,
      { cause: failures[0]?.error },
    );
  }
}

/** The items as @zkrx/fleet takes them: the set, or an observable of it. */
function itemsSource(items: FleetItems): readonly string[] | Observable<readonly string[]> {
  if (Array.isArray(items) || isObservable(items)) return items as readonly string[];
  const asObservable = (
    produced: readonly string[] | Observable<readonly string[]> | PromiseLike<readonly string[]>,
  ): Observable<readonly string[]> =>
    Array.isArray(produced)
      ? of(produced as readonly string[])
      : from(produced as Observable<readonly string[]>);
  if (typeof items === 'function') return defer(() => asObservable(items()));
  if (typeof (items as PromiseLike<unknown> | null)?.then === 'function') {
    return defer(() => asObservable(items as PromiseLike<readonly string[]>));
  }
  // Not items: @zkrx/fleet says what is wrong (ZkError BadArguments).
  return items as readonly string[];
}

/**
 * One partition this application is a member of: its items (to tell a second `join` apart) and
 * the membership, which keeps the per-item runs of `forEachOwned` in view until they settle.
 */
interface Joined {
  readonly items: FleetItems;
  readonly membership: Membership;
}

function sameItems(a: FleetItems, b: FleetItems): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return a === b;
  if (a.length !== b.length) return false;
  const sortedB = [...b].sort();
  return [...a].sort().every((item, index) => item === sortedB[index]);
}

/**
 * This application's share of @zkrx/fleet partitions, per path. Add it to the providers of a
 * module (with ZkModule global or imported); `@ForEachOwnedItem` uses it too.
 *
 * Each path is joined once per application (`join`, or at boot for the paths of
 * `@ForEachOwnedItem({ items })` methods), as the member `id` (the module's `id`, else
 * `hostname:pid:<random>`). Shutdown gives every item up at once (their signals abort), waits for the
 * per-item runs in flight, and only then releases the items' locks and leaves: the next owner of
 * an item never starts while this application still works on it.
 */
@Injectable()
export class FleetService implements OnModuleInit, OnModuleDestroy {
  private readonly memberships = new Map<string, Joined>();
  private readonly pending = new Map<string, FleetItems>();
  /** The items a job's runs hold now (running, or waiting their turn), by path and job. */
  private readonly inFlight = new Map<string, Set<string>>();
  private readonly logger = new Logger('FleetService');
  /** Paths left with `leave(path)`: not joined again for a new instance, only by `join`. */
  private readonly left = new Set<string>();
  private initialised = false;
  private closed = false;

  // Typed in the body: the connection (and the optional peers' types it names) stays out of the
  // published declarations, so that they load without @zkrx/leader or @zkrx/rwlock installed.
  private readonly connection: ZkConnection;

  constructor(@Inject(ZK_CONNECTION) connection: unknown) {
    this.connection = connection as ZkConnection;
  }

  /**
   * Joins the partition at `path` over `items` (once; a second call with the same items shares
   * the membership) and resolves once this application has its first assignment.
   *
   * ## Example
   * ```ts
   * await fleetService.join('/fleet/tenants', ['acme', 'globex', 'initech']);
   * console.log(fleetService.assignment('/fleet/tenants')?.items);
   * // Output: [ 'acme', 'initech' ]
   * ```
   *
   * @param path The partition's path (shared by every instance).
   * @param items The items (the same set on every instance): the set, an observable of it, a
   *   promise of it, or a function returning one of these (called at each join).
   * @param options The member `id`, `data`, `onSuspended`.
   * @return Resolves at the first assignment. Throws ZkError `BadArguments` / `InvalidPath` for
   *   bad input, or when `path` is already joined with other items.
   */
  join(path: string, items: FleetItems, options: FleetJoinOptions = {}): Promise<void> {
    this.left.delete(path);
    const existing = this.memberships.get(path);
    if (existing) {
      if (!sameItems(existing.items, items)) {
        throw new ZkError(
          ZkErrorCode.BadArguments,
          `FleetService.join: ${path} is joined already, with other items`,
        );
      }
      return existing.membership.joined;
    }
    const partitionOptions: PartitionOptions = {
      id: options.id ?? this.connection.id ?? defaultMemberId,
      ...(options.data === undefined ? {} : { data: options.data }),
      ...((options.onSuspended ?? this.connection.onSuspended) === undefined
        ? {}
        : { onSuspended: options.onSuspended ?? this.connection.onSuspended }),
    };
    const source = itemsSource(items);
    if (this.closed) {
      validatePartition(path, source, partitionOptions);
      return Promise.reject(
        new ZkError(ZkErrorCode.ClientClosed, `fleet ${path}: the application is shut down`),
      );
    }
    // A failure of the items' source (the database behind it): reported, then joined again.
    const reported = Array.isArray(source)
      ? source
      : (source as Observable<readonly string[]>).pipe(
          tap({
            error: (error: unknown) =>
              this.logger.error(`the items of ${path} failed; joining again in a second`, error),
          }),
        );
    // Checks the input at once (before anything is sent), joins, and joins again a second
    // later whenever joining fails, until left or shut down.
    validatePartition(path, source, partitionOptions);
    const membership = this.connection.joinPartition(path, reported, partitionOptions);
    // Every failure reaches the application's log: the member left (and joins again), or a
    // problem it goes on through (a poison report not written...).
    membership.errors$.subscribe(({ error, retryInMs, failures }) => {
      if (retryInMs === undefined) this.logger.warn(String((error as Error)?.message ?? error));
      else {
        this.logger.error(
          `left ${path} (${failures} failure${failures === 1 ? '' : 's'} in a row); joining again in ${Math.round(retryInMs)} ms`,
          error,
        );
      }
    });
    this.memberships.set(path, { items, membership });
    return membership.joined;
  }

  /**
   * This application's current assignment in the partition at `path` (undefined before the
   * first, or when not joined).
   *
   * @param path The partition's path.
   * @return The latest assignment.
   */
  assignment(path: string): Assignment | undefined {
    return this.closed ? undefined : this.memberships.get(path)?.membership.assignment;
  }

  /**
   * This application's assignments in the partition at `path`: the latest, then every new one;
   * completes when the application shuts down or leaves the path. Emits nothing when the path is
   * not joined.
   *
   * ## Example
   * ```ts
   * fleetService.watchAssignment('/fleet/tenants').subscribe(({ items }) => console.log(items));
   * // Output: [ 'acme', 'initech' ]
   * ```
   *
   * @param path The partition's path.
   * @return The assignments.
   */
  watchAssignment(path: string): Observable<Assignment> {
    return this.memberships.get(path)?.membership.assignment$ ?? NEVER;
  }

  /**
   * Leaves the partition at `path`: gives every item up at once (their signals abort), and
   * resolves once the per-item runs in flight there settled, each item's lock released as its
   * runs end. A later `join(path, items)` joins again.
   *
   * ## Example
   * ```ts
   * await fleetService.leave('/fleet/tenants');
   * ```
   *
   * @param path The partition's path.
   * @return Resolves once left (nothing to do when not joined).
   */
  async leave(path: string): Promise<void> {
    const joined = this.memberships.get(path);
    if (!joined) return;
    this.left.add(path);
    if (!this.closed) this.memberships.delete(path);
    await joined.membership.leave();
  }

  /**
   * The item `item` of the partition at `path` if this application owns it now: its `signal`,
   * `fencingToken`, `runIfOwned`, `guard`.
   */
  owned(path: string, item: string): OwnedItem | undefined {
    const owned = this.assignment(path)?.owned.get(item);
    return owned?.isOwned ? owned : undefined;
  }

  /**
   * Runs `work(item, owned)` for each item of `path` this application owns now, at most
   * `concurrency` (10) at once, each in the item's context (`owned.runIfOwned`): a move of the
   * item aborts `owned.signal` and waits for the run before releasing the item; an item that
   * moved before its turn is not run. With a `job` name, an item whose previous run of that job
   * is still in flight (or waiting) is skipped. Resolves the results by item, in item order,
   * once every run settled — or rejects {@link OwnedItemsError} with every failure (a run that
   * stops with its item's `signal.reason`, the item having moved away, is not one).
   *
   * ## Example
   * ```ts
   * const results = await fleetService.forEachOwned(
   *   '/fleet/tenants',
   *   (tenant, owned) => syncTenant(tenant, { signal: owned.signal, fencingToken: owned.fencingToken }),
   *   { concurrency: 4, job: 'sync' },
   * );
   * ```
   *
   * @param path The partition's path.
   * @param work What to run per owned item.
   * @param options `concurrency`, `job`, `overlap`.
   * @return The results of the items run, by item.
   */
  async forEachOwned<T>(
    path: string,
    work: (item: string, owned: OwnedItem) => T | Promise<T>,
    options: ForEachOwnedOptions = {},
  ): Promise<Map<string, Awaited<T>>> {
    const concurrency = checkConcurrency(options.concurrency);
    const assignment = this.assignment(path);
    const membership = this.memberships.get(path)?.membership;
    if (!assignment || !membership) return new Map();
    // Taken at once, before any run starts: the next tick sees them as in flight.
    let held: Set<string> | undefined;
    if (options.job !== undefined && options.overlap !== 'allow') {
      const key = `${path}\u0000${options.job}`;
      held = this.inFlight.get(key) ?? new Set();
      this.inFlight.set(key, held);
    }
    const items = assignment.items.filter((item) => !held?.has(item));
    for (const item of items) held?.add(item);
    const results = new Map<string, Awaited<T>>();
    const failures = new Map<string, unknown>();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let index = next++; index < items.length; index = next++) {
        const item = items[index] as string;
        const owned = assignment.owned.get(item);
        try {
          const run = owned?.runIfOwned(() => Promise.resolve().then(() => work(item, owned)));
          if (run !== undefined) results.set(item, await run);
        } catch (error) {
          // Stopped with its item's own reason (`owned.signal.throwIfAborted()` once the item
          // moved away or the application shuts down): what it was asked to do, not a failure.
          if (!(owned?.signal.aborted && error === owned.signal.reason)) failures.set(item, error);
        } finally {
          held?.delete(item);
        }
      }
    };
    const workers = Array.from({ length: Math.min(concurrency, items.length) }, worker);
    await membership.track(Promise.all(workers));
    const inOrder = (found: Map<string, unknown>) => items.filter((item) => found.has(item));
    if (failures.size > 0) {
      throw new OwnedItemsError(
        path,
        inOrder(failures).map((item) => ({ item, error: failures.get(item) })),
      );
    }
    return new Map(inOrder(results).map((item) => [item, results.get(item) as Awaited<T>]));
  }

  /**
   * Takes note of a @ForEachOwnedItem method's partition and items (Nest made an instance and
   * injected this service): joined when the application initialises, or at once after that.
   */
  adopt(path: string, items: FleetItems): void {
    if (!this.initialised) this.pending.set(path, items);
    else if (!this.left.has(path) && !this.memberships.has(path)) {
      void this.join(path, items).catch(() => {});
    }
  }

  /** Joins the partitions of every @ForEachOwnedItem method that declared its items. */
  async onModuleInit(): Promise<void> {
    this.initialised = true;
    const pending = [...this.pending];
    this.pending.clear();
    await Promise.all(pending.map(([path, items]) => this.join(path, items)));
  }

  /**
   * Gives every item up (signals abort), waits for the per-item runs in flight, then each item's
   * lock is released and the partitions left.
   */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    // Every membership is left at once (the calls give their items up synchronously).
    await Promise.all([...this.memberships.values()].map(({ membership }) => membership.leave()));
  }
}

/** A concurrency: a whole number >= 1 or Infinity (ZkError `BadArguments`), 10 by default. */
export function checkConcurrency(value: unknown): number {
  if (value === undefined) return 10;
  const whole = typeof value === 'number' && (Number.isInteger(value) || value === Infinity);
  if (!whole || value < 1) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `concurrency must be a whole number >= 1, got ${String(value)}`,
    );
  }
  return value;
}
