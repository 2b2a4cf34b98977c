/**
 * FleetService: this application's memberships in @zkrx/fleet partitions, one per path, joined
 * once and left when the application shuts down — after the per-item runs in flight settle.
 */
import { hostname } from 'node:os';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import {
  type Assignment,
  joinPartition,
  type OwnedItem,
  type PartitionMembership,
  type PartitionOptions,
  validatePartition,
} from '@zkrx/fleet';
import { NEVER, type Observable } from 'rxjs';
import { ZK_CONNECTION } from './tokens';
import type { ZkConnection } from './zk-connection';

/** How this application joins a partition (`id` defaults to the module's `id`, else `hostname:pid`). */
export type FleetJoinOptions = Partial<PartitionOptions>;

/**
 * One partition this application is a member of: its items (to tell a second `join` apart) and
 * the membership, which keeps the per-item runs of `forEachOwned` in view until they settle.
 */
interface Joined {
  readonly items: readonly string[] | Observable<readonly string[]>;
  readonly membership: PartitionMembership;
}

/** The @ForEachOwnedItem partitions of each class: path and items. */
const declared = new WeakMap<Function, Map<string, readonly string[]>>();

/** Records that `type` has a @ForEachOwnedItem method on `path` over `items`. */
export function declareFleetItems(type: Function, path: string, items: readonly string[]): void {
  let own = declared.get(type);
  if (!own) {
    own = new Map();
    declared.set(type, own);
  }
  own.set(path, items);
}

function declaredOf(type: Function): Map<string, readonly string[]> {
  const found = new Map<string, readonly string[]>();
  for (let current: unknown = type; typeof current === 'function'; ) {
    for (const [path, items] of declared.get(current) ?? []) {
      if (!found.has(path)) found.set(path, items);
    }
    current = Object.getPrototypeOf(current);
  }
  return found;
}

function sameItems(
  a: readonly string[] | Observable<readonly string[]>,
  b: readonly string[] | Observable<readonly string[]>,
): boolean {
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
 * `hostname:pid`). Shutdown gives every item up at once (their signals abort), waits for the
 * per-item runs in flight, and only then releases the items' locks and leaves: the next owner of
 * an item never starts while this application still works on it.
 */
@Injectable()
export class FleetService implements OnModuleInit, OnModuleDestroy {
  private readonly memberships = new Map<string, Joined>();
  private readonly pending = new Map<string, readonly string[]>();
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
   * @param items The items (the same set on every instance), or an observable of the set.
   * @param options The member `id`, `data`, `onSuspended`.
   * @return Resolves at the first assignment. Throws ZkError `BadArguments` / `InvalidPath` for
   *   bad input, or when `path` is already joined with other items.
   */
  join(
    path: string,
    items: readonly string[] | Observable<readonly string[]>,
    options: FleetJoinOptions = {},
  ): Promise<void> {
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
      id: options.id ?? this.connection.id ?? `${hostname()}:${process.pid}`,
      ...(options.data === undefined ? {} : { data: options.data }),
      ...((options.onSuspended ?? this.connection.onSuspended) === undefined
        ? {}
        : { onSuspended: options.onSuspended ?? this.connection.onSuspended }),
    };
    if (this.closed) {
      validatePartition(path, items, partitionOptions);
      return Promise.reject(
        new ZkError(ZkErrorCode.ClientClosed, `fleet ${path}: the application is shut down`),
      );
    }
    // Checks the input at once (before anything is sent), joins, and joins again a second
    // later whenever joining fails, until left or shut down.
    const membership = joinPartition(this.connection.client, path, items, partitionOptions);
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
    return this.memberships.get(path)?.membership.watchAssignment() ?? NEVER;
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
   * Runs `work(item, owned)` for each item of `path` this application owns now, all at once,
   * each in the item's context (`owned.runIfOwned`): a move of the item aborts `owned.signal`
   * and waits for the run before releasing the item. Resolves the results in item order
   * (rejects with the first failure, once every run settled).
   *
   * ## Example
   * ```ts
   * await fleetService.forEachOwned('/fleet/tenants', (tenant, owned) =>
   *   syncTenant(tenant, { signal: owned.signal, fencingToken: owned.fencingToken }),
   * );
   * ```
   *
   * @param path The partition's path.
   * @param work What to run per owned item.
   * @return The results, in item order.
   */
  async forEachOwned<T>(
    path: string,
    work: (item: string, owned: OwnedItem) => T | Promise<T>,
  ): Promise<Awaited<T>[]> {
    const assignment = this.assignment(path);
    if (!assignment) return [];
    const runs = assignment.items.flatMap((item) => {
      const owned = assignment.owned.get(item);
      const run = owned?.runIfOwned(() => Promise.resolve().then(() => work(item, owned)));
      return run ? [run] : [];
    });
    const settled =
      (await this.memberships.get(path)?.membership.track(Promise.allSettled(runs))) ?? [];
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return settled.map((result) => (result as PromiseFulfilledResult<Awaited<T>>).value);
  }

  /**
   * Takes note of an instance with @ForEachOwnedItem methods declaring their items (Nest made it
   * and injected this service): their partitions are joined when the application initialises,
   * or at once after that.
   */
  adopt(type: Function): void {
    for (const [path, items] of declaredOf(type)) {
      if (!this.initialised) this.pending.set(path, items);
      else if (!this.left.has(path)) void this.join(path, items).catch(() => {});
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
