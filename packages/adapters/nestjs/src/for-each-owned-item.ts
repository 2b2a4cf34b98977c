/**
 * The @ForEachOwnedItem method decorator: the method runs once for each item of a @zkrx/fleet
 * partition this application owns, with the item and its ownership (signal, fencing token).
 */
import { validatePartition } from '@zkrx/fleet';
import { validateLockPath } from '@zkrx/lock';
import { declareFleetItems, FleetService } from './fleet-service';
import { decorateMethod, type MethodDecoration } from './method-decoration';

/** The application's FleetService, on each decorated instance; told of each instance. */
const forEachOwnedItem: MethodDecoration<FleetService> = {
  decorator: '@ForEachOwnedItem',
  key: Symbol.for('@zkrx/nestjs: @ForEachOwnedItem needs FleetService in the providers'),
  token: FleetService,
  onInjected: (instance, fleet) => fleet.adopt(instance.constructor),
  needs:
    'with FleetService in its providers: add FleetService (from @zkrx/nestjs/fleet) and let Nest create the class',
};

/** Options of `@ForEachOwnedItem`. */
export interface ForEachOwnedItemOptions {
  /**
   * The partition's items (the same set on every instance): the application joins the
   * partition at boot. Without them, join it yourself (`FleetService.join(path, items)`);
   * until then the method runs for no item.
   */
  items?: readonly string[];
}

/**
 * Runs the decorated method once for each item of the partition at `path` that this
 * application owns when it is called, all at once: `method(item, owned, ...args)`, `owned`
 * being the item's `OwnedItem` (`signal` aborts when the item moves away, `fencingToken` rises
 * from owner to owner). Made for scheduled jobs (`@Interval`, `@Cron`) that every instance
 * runs, each over its own share of the items. The call resolves the results in item order.
 *
 * A run in flight keeps its item: when the item moves (or the application shuts down), its
 * signal aborts and its lock is released only once the run settled — the next owner never
 * starts while this one still runs. Needs `FleetService` in the providers of the class's module
 * (and ZkModule).
 *
 * ## Example
 * ```ts
 * @Injectable()
 * export class TenantSync {
 *   @Interval(10_000)
 *   @ForEachOwnedItem('/fleet/tenants', { items: ['acme', 'globex', 'initech'] })
 *   async sync(tenant: string, owned: OwnedItem) {
 *     await this.store.sync(tenant, { signal: owned.signal, fencingToken: owned.fencingToken });
 *   }
 * }
 * ```
 *
 * @param path The partition's path.
 * @param options `items`, to join at boot.
 * @return A method decorator.
 */
export function ForEachOwnedItem(path: string, options: ForEachOwnedItemOptions = {}) {
  validateLockPath(path, 'partition');
  const items = options.items;
  if (items !== undefined) validatePartition(path, items, { id: 'any' });
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void =>
    decorateMethod(forEachOwnedItem, target, key, descriptor, ({ original, serviceOf }) => {
      if (items !== undefined) declareFleetItems(target.constructor, path, items);
      // Async: a missing FleetService rejects, as the runs do.
      return async function forEachOwnedItemMethod(this: unknown, ...args: unknown[]) {
        return serviceOf(this).forEachOwned(path, (item, owned) =>
          original.call(this, item, owned, ...args),
        );
      };
    });
}
