/**
 * The sticky assignment every member of a partition computes from the same inputs: the live
 * members in join order, the item set, and who owns each item now. Pure and deterministic.
 */

export interface AssignInput {
  /** The live members' ids, in join order. */
  readonly members: readonly string[];
  /** The items, distinct, sorted (every member sorts them the same way). */
  readonly items: readonly string[];
  /** Each item's current owner, when it is one of `members`; others count as unowned. */
  readonly owners: ReadonlyMap<string, string>;
}

/**
 * Who should own each item: balanced (each member ⌊n/m⌋ or ⌈n/m⌉ items) and sticky (no balanced
 * assignment keeps more items with their current owner).
 *
 * 1. Quotas: ⌊n/m⌋ each; the `n mod m` extra items go to the members owning the most now, their
 *    counts capped at ⌊n/m⌋ + 1, ties by join order. A member with at least ⌊n/m⌋ + 1 items
 *    keeps one more item with an extra slot, any other member none: so giving the extras to
 *    those first keeps the most. The cap keeps the choice stable while items move (a member
 *    giving up surplus items still has ⌊n/m⌋ + 1 or more: same rank).
 * 2. Each member keeps the items it owns, up to its quota, lowest names first.
 * 3. Every other item, in name order, goes to the member with the most room left (ties by join
 *    order).
 *
 * A fixed point: when every item is owned as the result says, the counts equal the quotas, the
 * same members rank first, every member keeps all its items, and the result is the same.
 *
 * ## Example
 * ```ts
 * assign({ members: ['a', 'b', 'c'], items: ['1', '2', '3', '4'], owners: new Map([['1', 'a'], ['2', 'a'], ['3', 'a'], ['4', 'b']]) });
 * // Output: Map { '1' => 'a', '2' => 'a', '4' => 'b', '3' => 'c' }
 * ```
 *
 * @param input Members in join order, sorted items, current owners.
 * @return Each item's owner-to-be (empty without members).
 */
export function assign(input: AssignInput): Map<string, string> {
  const { members, items, owners } = input;
  const result = new Map<string, string>();
  const count = members.length;
  if (count === 0) return result;
  const base = Math.floor(items.length / count);
  const extra = items.length % count;
  const index = new Map(members.map((id, at) => [id, at]));
  const owned: string[][] = members.map(() => []);
  for (const item of items) {
    const owner = owners.get(item);
    const at = owner === undefined ? undefined : index.get(owner);
    if (at !== undefined) owned[at]?.push(item);
  }
  const capped = owned.map((list) => Math.min(list.length, base + 1));
  const ranked = members
    .map((_, at) => at)
    .sort((a, b) => (capped[b] as number) - (capped[a] as number) || a - b);
  const quota = members.map(() => base);
  for (const at of ranked.slice(0, extra)) quota[at] = base + 1;
  const room = quota.slice();
  for (const [at, list] of owned.entries()) {
    for (const item of list.slice(0, quota[at])) {
      result.set(item, members[at] as string);
      room[at] = (room[at] as number) - 1;
    }
  }
  for (const item of items) {
    if (result.has(item)) continue;
    let best = 0;
    for (let at = 1; at < count; at++) {
      if ((room[at] as number) > (room[best] as number)) best = at;
    }
    result.set(item, members[best] as string);
    room[best] = (room[best] as number) - 1;
  }
  return result;
}

/** How many owned items `next` takes from their current owner (what a change costs). */
export function movesOf(
  owners: ReadonlyMap<string, string>,
  next: ReadonlyMap<string, string>,
): number {
  let moves = 0;
  for (const [item, owner] of owners) {
    const target = next.get(item);
    if (target !== undefined && target !== owner) moves += 1;
  }
  return moves;
}
