/**
 * @zkrx/express/fleet — Express middleware for @zkrx/fleet partitions: a request served only by
 * the instance owning its item (a separate entry: @zkrx/fleet is an optional peer).
 */

export type { ItemOwnerOnlyHandler, ItemOwnerOnlyOptions } from './item-owner-only';
export { itemOwnerOnly, ownedItemOf } from './item-owner-only';
