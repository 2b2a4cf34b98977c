/**
 * The sticky assignment the coordinator computes: the live members in id order, the items they
 * state (all of them, or some: `lists`), and who owns each item now. Pure and deterministic.
 */

export interface AssignInput {
  /** The live members' ids, in id order. */
  readonly members: readonly string[];
  /** The items, distinct, sorted (every member sorts them the same way). */
  readonly items: readonly string[];
  /** Each item's current owner, when it is one of `members`; others count as unowned. */
  readonly owners: ReadonlyMap<string, string>;
  /**
   * The items only some members list, with those members (positions in `members`): such an
   * item goes to one of them. An item not in this map is listed by every member.
   */
  readonly lists?: ReadonlyMap<string, readonly number[]>;
}

/**
 * Who should own each item: balanced (each member ⌊n/m⌋ or ⌈n/m⌉ items) and sticky (no balanced
 * assignment keeps more items with their current owner), each item with a member that lists it.
 *
 * 1. Quotas: ⌊n/m⌋ each; the `n mod m` extra items go to the members owning the most now, their
 *    counts capped at ⌊n/m⌋ + 1, ties by member order (ids sorted). A member with at least ⌊n/m⌋ + 1 items
 *    keeps one more item with an extra slot, any other member none: so giving the extras to
 *    those first keeps the most. The cap keeps the choice stable while items move (a member
 *    giving up surplus items still has ⌊n/m⌋ + 1 or more: same rank).
 * 2. Items only some members list first: each member keeps those it owns and lists, up to its
 *    quota (lowest names first); each of the others, fewest listers first, goes to the lister
 *    with the most room left (over its quota when none has room: an item goes to a member that
 *    lists it).
 * 3. Each member keeps the other items it owns, up to the room left (lowest names first).
 * 4. Every other item, in name order, goes to the member with the most room left (ties by id
 *    order).
 *
 * When every member lists every item (step 2 then does nothing): balanced by
 * construction, and a fixed point — when every item is owned as the result says, the counts equal
 * the quotas, the same members rank first, every member keeps all its items, and the result is
 * the same.
 *
 * ## Example
 * ```ts
 * assign({ members: ['a', 'b', 'c'], items: ['1', '2', '3', '4'], owners: new Map([['1', 'a'], ['2', 'a'], ['3', 'a'], ['4', 'b']]) });
 * // Output: Map { '1' => 'a', '2' => 'a', '4' => 'b', '3' => 'c' }
 * ```
 *
 * O(n + m log m + p log m) for n items, m members and p items placed.
 *
 * @param input Members in id order, sorted items, current owners, who lists what.
 * @return Each item's owner-to-be (empty without members).
 */
export function assign(input: AssignInput): Map<string, string> {
  const { members, items, owners } = input;
  const lists = input.lists ?? new Map<string, readonly number[]>();
  const result = new Map<string, string>();
  const count = members.length;
  if (count === 0) return result;
  const base = Math.floor(items.length / count);
  const extra = items.length % count;
  const index = new Map(members.map((id, at) => [id, at]));
  // Each member's items in item order: those only some members list, and the others (one pass).
  const ownedListed: string[][] = members.map(() => []);
  const ownedCommon: string[][] = members.map(() => []);
  for (const item of items) {
    const owner = owners.get(item);
    const at = owner === undefined ? undefined : index.get(owner);
    if (at === undefined) continue;
    const listers = lists.get(item);
    if (listers === undefined) ownedCommon[at]?.push(item);
    else if (listers.includes(at)) ownedListed[at]?.push(item);
  }
  const capped = members.map((_, at) =>
    Math.min((ownedListed[at] as string[]).length + (ownedCommon[at] as string[]).length, base + 1),
  );
  const ranked = members
    .map((_, at) => at)
    .sort((a, b) => (capped[b] as number) - (capped[a] as number) || a - b);
  const quota = members.map(() => base);
  for (const at of ranked.slice(0, extra)) quota[at] = base + 1;
  const room = quota.slice();
  const keep = (lists: string[][]) => {
    for (const [at, list] of lists.entries()) {
      const kept = Math.max(0, Math.min(list.length, room[at] as number));
      for (let k = 0; k < kept; k++) result.set(list[k] as string, members[at] as string);
      room[at] = (room[at] as number) - kept;
    }
  };
  // Items only some members list come first — kept where their owner lists them, then each of
  // the others to the lister with the most room (below none if it must: nobody else may take
  // it), fewest listers first — so that the room left is taken by the items anyone can take.
  keep(ownedListed);
  if (lists.size > 0) {
    const restricted = [...lists]
      .filter(([item]) => !result.has(item))
      .sort(([a, x], [b, y]) => x.length - y.length || (a < b ? -1 : a > b ? 1 : 0));
    for (const [item, listers] of restricted) {
      let best: number | undefined;
      for (const at of listers) {
        if (at < 0 || at >= count) continue;
        if (best === undefined || (room[at] as number) > (room[best] as number)) best = at;
      }
      if (best === undefined) continue;
      result.set(item, members[best] as string);
      room[best] = (room[best] as number) - 1;
    }
  }
  keep(ownedCommon);
  // The rest, in item order, each to the member with the most room left (ties by member order (ids sorted)):
  // a heap of members by room, O(log m) a placement. The rooms left add up to the items left (or
  // more, when items only some list went over quotas).
  const heap = new RoomHeap(room);
  for (const item of items) {
    if (result.has(item) || lists.has(item)) continue;
    const at = heap.takeOne();
    if (at === undefined) break;
    result.set(item, members[at] as string);
  }
  return result;
}

/** Members by room left: the most room first, ties by the lowest index (id order). */
class RoomHeap {
  private readonly heap: number[] = [];

  constructor(private readonly room: number[]) {
    for (let at = 0; at < room.length; at++) if ((room[at] as number) > 0) this.push(at);
  }

  /** The member with the most room (ties: the lowest index), its room one less; none left: undefined. */
  takeOne(): number | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    this.room[top] = (this.room[top] as number) - 1;
    const last = this.heap.pop() as number;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    if ((this.room[top] as number) > 0) this.push(top);
    return top;
  }

  private before(a: number, b: number): boolean {
    const roomA = this.room[a] as number;
    const roomB = this.room[b] as number;
    return roomA > roomB || (roomA === roomB && a < b);
  }

  private push(at: number): void {
    const heap = this.heap;
    heap.push(at);
    let child = heap.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.before(heap[child] as number, heap[parent] as number)) break;
      [heap[child], heap[parent]] = [heap[parent] as number, heap[child] as number];
      child = parent;
    }
  }

  private down(start: number): void {
    const heap = this.heap;
    let parent = start;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let best = parent;
      if (left < heap.length && this.before(heap[left] as number, heap[best] as number)) {
        best = left;
      }
      if (right < heap.length && this.before(heap[right] as number, heap[best] as number)) {
        best = right;
      }
      if (best === parent) return;
      [heap[best], heap[parent]] = [heap[parent] as number, heap[best] as number];
      parent = best;
    }
  }
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
