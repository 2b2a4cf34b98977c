/**
 * `partition`: a sticky, cooperative work partitioner. One member, the coordinator
 * (coordinator.ts), writes each member's share in its assignment node; every member takes its
 * share one lock per item (partition-engine.ts). An item is in a member's assignment only while
 * it holds that item's lock, and leaves it before the lock is released.
 */
import type { ZkClient } from '@zkrx/core';
import { Observable } from 'rxjs';
import type { MemberProblem } from './member-record';
import { type PartitionOptions, type ResolvedPartition, resolvePartition } from './options';
import { type Assignment, PartitionEngine } from './partition-engine';

export type { Assignment };

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
