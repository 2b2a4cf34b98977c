/**
 * The @ForEachOwnedItem method decorator: the method runs once for each item of a @zkrx/fleet
 * partition this application owns, with the item and its ownership (signal, fencing token).
 */
import { validatePartition } from '@zkrx/fleet';
import { validateLockPath } from '@zkrx/lock/recipe';
import {
  checkChoice,
  checkOptionsObject,
  decorateMethod,
  type MethodDecoration,
  PerInstance,
} from '../connection/method-decoration';
import { checkConcurrency, type FleetItems, FleetService } from './fleet-service';

/** The application's FleetService, on each decorated instance. */
const forEachOwnedItem: MethodDecoration<FleetService> = {
  decorator: '@ForEachOwnedItem',
  key: Symbol.for('@zkrx/nestjs: @ForEachOwnedItem needs FleetService in the providers'),
  token: FleetService,
  needs:
    'with FleetService in its providers: add FleetService (from @zkrx/nestjs/fleet) and let Nest create the class',
};

/** Options of `@ForEachOwnedItem`. */
export interface ForEachOwnedItemOptions {
  /**
   * The partition's items (the same set on every instance), to join it when the application
   * starts: the set, an observable of it, a promise of it, or a function returning one of these
   * (called at each join: items from a database). Without them, join it yourself
   * (`FleetService.join(path, items)`); until then the method runs for no item.
   */
  items?: FleetItems;
  /** How many owned items run at once on this application (default 10; `Infinity`: all). */
  concurrency?: number;
  /**
   * An item whose previous run of this method is still in flight (or waiting its turn):
   * `skip` (default) leaves it out of this call, so that a slow tick never runs an item beside
   * itself; `allow` runs it again.
   */
  overlap?: 'skip' | 'allow';
}

/**
 * The partition's path as a function of the instance, called when the application starts (a
 * path from configuration an injected service holds).
 */
// biome-ignore lint/suspicious/noExplicitAny: the decorated class's instance
export type ForEachOwnedItemPathOf = (instance: any) => string;

/**
 * @ForEachOwnedItem's options as a function of the instance, called when the application
 * starts: items from a repository the class injects (`(self: TenantSync) => ({ items: () =>
 * self.tenants.ids() })`), settings from configuration.
 */
// biome-ignore lint/suspicious/noExplicitAny: the decorated class's instance
export type ForEachOwnedItemOptionsOf = (instance: any) => ForEachOwnedItemOptions;

interface CheckedForEach {
  readonly path: string;
  readonly items: FleetItems | undefined;
  readonly concurrency: number;
  readonly overlap: 'skip' | 'allow';
}

/** Checks @ForEachOwnedItem's arguments (ZkError `InvalidPath` / `BadArguments`). */
function checkForEach(path: string, options: ForEachOwnedItemOptions): CheckedForEach {
  validateLockPath(path, 'partition');
  checkOptionsObject('@ForEachOwnedItem', options);
  const { items } = options;
  if (Array.isArray(items)) validatePartition(path, items, { id: 'any' });
  const overlap = checkChoice('@ForEachOwnedItem', 'overlap', options.overlap, ['skip', 'allow']);
  return { path, items, concurrency: checkConcurrency(options.concurrency), overlap };
}

/**
 * Runs the decorated method for each item of the partition at `path` that this application owns
 * when it is called: `method(item, owned, ...args)`, `owned` being the item's `OwnedItem`
 * (`signal` aborts when the item moves away, `fencingToken` rises from owner to owner), at most
 * `concurrency` (10) items at once. Made for scheduled jobs (`@Interval`, `@Cron`) that every
 * instance runs, each over its own share of the items.
 *
 * Per call: an item whose previous run is still in flight is left out (`overlap: 'skip'`);
 * an item that moves away before its turn is not run; the call resolves the results by item
 * once every run settled, or rejects `OwnedItemsError` listing every failed item (the others
 * ran). A run in flight keeps its item: when the item moves (or the application shuts down),
 * its signal aborts and its lock is released only once the run settled — the next owner never
 * starts while this one still runs. Needs `FleetService` in the providers of the class's module
 * (and ZkModule).
 *
 * ## Example
 * ```ts
 * @Injectable()
 * export class TenantSync {
 *   constructor(private readonly tenants: TenantRepository) {}
 *
 *   @Interval(10_000)
 *   @ForEachOwnedItem('/fleet/tenants', (self: TenantSync) => ({
 *     items: () => self.tenants.activeIds(), // a promise: read at start, and at each rejoin
 *     concurrency: 4,
 *   }))
 *   async sync(tenant: string, owned: OwnedItem) {
 *     await this.store.sync(tenant, { signal: owned.signal, fencingToken: owned.fencingToken });
 *   }
 * }
 * ```
 *
 * @param path The partition's path, or a function of the instance returning it (at start).
 * @param options `items`, `concurrency`, `overlap`; or a function of the instance returning them.
 * @return A method decorator.
 */
export function ForEachOwnedItem(
  path: string | ForEachOwnedItemPathOf,
  options: ForEachOwnedItemOptions | ForEachOwnedItemOptionsOf = {},
) {
  // Given as values: checked here. As functions of the instance: when the application starts.
  const given =
    typeof path === 'function' || typeof options === 'function'
      ? undefined
      : checkForEach(path, options);
  const settingsOf = new PerInstance<CheckedForEach>(
    (instance) =>
      given ??
      checkForEach(
        typeof path === 'function' ? path(instance) : path,
        typeof options === 'function' ? options(instance) : options,
      ),
  );
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void =>
    decorateMethod(forEachOwnedItem, target, key, descriptor, (method) => {
      const { original, where, serviceOf } = method;
      // Each instance Nest makes: its partition is joined when the application starts.
      method.onInstance((instance, fleet) => {
        const { path: partition, items } = settingsOf.take(instance);
        if (items !== undefined) fleet.adopt(partition, items);
      });
      // Async: a missing FleetService rejects, as the runs do.
      return async function forEachOwnedItemMethod(this: unknown, ...args: unknown[]) {
        const fleet = serviceOf(this);
        const { path: partition, concurrency, overlap } = settingsOf.of(this as object);
        return fleet.forEachOwned(
          partition,
          (item, owned) => original.call(this, item, owned, ...args),
          { concurrency, job: where, overlap },
        );
      };
    });
}
