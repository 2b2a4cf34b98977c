/**
 * The rules a queue decides by: the recipe's rule type, the exclusive rule (mutex, write lock,
 * elections, the semaphore's gate), and the listing the trusted hand-off decides on.
 */
import type { LockChild } from './lock-children';

/** What a recipe concludes from the sorted children and its own position among them. */
export type QueueDecision =
  | { readonly holds: true }
  /**
   * Not yet: wait for `waitFor` (the one node whose deletion may let us in) to go, then list
   * again; or for any change of the children (`'children'`, a count-based rule such as
   * Curator's semaphore). The wait is only for liveness and herd-freedom: every decision is
   * made again on a new listing.
   */
  | { readonly holds: false; readonly waitFor: LockChild | 'children' };

/**
 * The recipe's rule: do we hold, and if not, what do we wait for. Called with a listing that
 * contains our node (`children[ourIndex]`), sorted in creation order.
 */
export type Decide = (children: readonly LockChild[], ourIndex: number) => QueueDecision;

/**
 * Holds when first; otherwise waits for the node just before it (herd-free: a release wakes
 * one waiter), then lists again.
 *
 * Safe because the listing contains our node: a node created after ours, in the parent our node
 * lives in, gets a higher sequence number, and that parent cannot be reaped while our node is in
 * it. So no node can come before ours while it exists: first once, first until it goes.
 */
export const exclusiveRule: Decide = (children, ourIndex) =>
  ourIndex === 0
    ? { holds: true }
    : { holds: false, waitFor: children[ourIndex - 1] as (typeof children)[number] };

/**
 * The listing we had, minus the awaited node that went: what the trusted hand-off decides on.
 *
 * One kind of node may have come in front of ours since that listing: a downgrade read node,
 * which a write holder makes while it holds, named with its write node's key so it sorts with
 * it (and not sequential). Any writer before ours was in our listing (it was created before our
 * node, and it existed when its read node was made); if it is still in `rest`, we are not first
 * anyway. So a possible downgrade node is the awaited writer's: it stands in `rest` in the
 * writer's place, as a reader (it lets readers in, not writers or mutex holders).
 */
export function withoutAwaited(children: readonly LockChild[], awaited: LockChild): LockChild[] {
  const rest: LockChild[] = [];
  for (const child of children) {
    if (child.name !== awaited.name) rest.push(child);
    else if (awaited.kind === 'write') {
      rest.push({ ...awaited, name: `(a downgrade of ${awaited.name})`, kind: 'read' });
    }
  }
  return rest;
}

/**
 * The listing we had, as the local hand-off leaves it (`local-hand-off.ts`): the awaited node
 * held first and is gone, and our node existed when it went.
 *
 * Every node that sorts before the awaited one by its sequence was gone when the awaited node
 * held first (it was created before it, in the same parent, and was not in that listing); no
 * node sorting there can be made and hold afterwards (a sequential node is made with a higher
 * sequence; a downgrade read node is granted only while its writer's node is listed, and that
 * writer is among the gone). So they drop out; what remains is `withoutAwaited` of the rest — a
 * downgrade node of the awaited writer, which sorts with it (same sequence), stays in its place.
 */
export function afterHandOff(children: readonly LockChild[], awaited: LockChild): LockChild[] {
  return withoutAwaited(
    children.filter((child) => child.order >= awaited.order),
    awaited,
  );
}
