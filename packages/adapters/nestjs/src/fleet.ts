/**
 * @zkrx/nestjs/fleet — @zkrx/fleet for NestJS: FleetService (this application's share of
 * partitions) and @ForEachOwnedItem (a method run once per owned item). A separate entry:
 * @zkrx/fleet is an optional peer.
 */

export type { FleetItems, FleetJoinOptions, ForEachOwnedOptions } from './fleet/fleet-service';
export { FleetService, OwnedItemsError } from './fleet/fleet-service';
export type {
  ForEachOwnedItemOptions,
  ForEachOwnedItemOptionsOf,
  ForEachOwnedItemPathOf,
} from './fleet/for-each-owned-item';
export { ForEachOwnedItem } from './fleet/for-each-owned-item';
