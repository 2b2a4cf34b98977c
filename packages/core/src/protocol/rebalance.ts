/**
 * Whether a connected client moves when its server list changes, and where to: the rule of
 * ZooKeeper's Java client (`StaticHostProvider.updateServerList`, ZOOKEEPER-1355), which keeps
 * the expected number of clients per server equal while moving as few as it can.
 */

/** What {@link planRebalance} decides: stay, or the servers to try, in order. */
export type Rebalance<T> =
  | { readonly move: false }
  | { readonly move: true; readonly order: readonly T[]; readonly why: 'removed' | 'added' };

/**
 * The rule. `next` splits into servers that were in `previous` ("old") and the others ("new").
 *
 * - The client's server is in `next`:
 *   - servers were added (|next| > |previous|): it moves to a new one with probability
 *     `1 − |previous| / |next|` — of the clients on each old server that fraction leaves, and
 *     the new servers each get, on average, as many as an old one keeps;
 *   - otherwise it stays (its server's load can only grow).
 * - Its server left: it moves — to a new server with probability `pNew`, to an old one with
 *   `pOld = |old| · (|previous| − |next|) / (|next| · (|previous| − |old|))`, `pNew = 1 − pOld`,
 *   the split that leaves every server of `next` the same expected load.
 *
 * The order is the Java client's `nextHostInReconfigMode`: each try draws "new" with
 * probability `pNew` and takes the next server of that group (shuffled), the other group once
 * one is used up — except that a client whose server stays tries only the new servers (the Java
 * client goes on to the old ones, its own included: connected, staying is better). Not
 * connected (`current` undefined), there is nothing to move.
 *
 * ## Example
 * ```ts
 * const plan = planRebalance({
 *   previous: ['a', 'b', 'c'], next: ['a', 'b', 'c', 'd', 'e'], current: 'a',
 *   same: (x, y) => x === y, random: () => 0.1,
 * });
 * console.log(plan); // 0.1 ≤ 1 − 3/5: this client is one of those that move to d or e
 * // Output: { move: true, order: [ 'e', 'd' ], why: 'added' }
 * ```
 *
 * @param input The list before and after, the client's server, how to compare servers, and the
 *   source of randomness.
 * @return Stay, or where to move.
 */
export function planRebalance<T>(input: {
  readonly previous: readonly T[];
  readonly next: readonly T[];
  readonly current: T | undefined;
  readonly same: (a: T, b: T) => boolean;
  readonly random: () => number;
}): Rebalance<T> {
  const { previous, next, current, same, random } = input;
  if (current === undefined || next.length === 0) return { move: false };
  const kept = next.some((server) => same(server, current));
  const oldServers = shuffle(
    next.filter((server) => previous.some((known) => same(known, server))),
    random,
  );
  const newServers = shuffle(
    next.filter((server) => !previous.some((known) => same(known, server))),
    random,
  );
  if (kept) {
    if (next.length <= previous.length) return { move: false };
    if (random() > 1 - previous.length / next.length) return { move: false };
    // Only to a new server: if none of them answers, staying is better than another old one.
    return { move: true, order: newServers, why: 'added' };
  }
  let pNew: number;
  if (next.length > previous.length) {
    pNew = 1;
  } else if (previous.length === oldServers.length) {
    // The client was on a server its list did not name (a load balancer's address): spread
    // evenly over the new list (Java divides by zero here).
    pNew = newServers.length / next.length;
  } else {
    const pOld =
      (oldServers.length * (previous.length - next.length)) /
      (next.length * (previous.length - oldServers.length));
    pNew = 1 - pOld;
  }
  const order: T[] = [];
  let newIndex = 0;
  let oldIndex = 0;
  while (newIndex < newServers.length || oldIndex < oldServers.length) {
    const takeNew = random() <= pNew;
    if (newIndex < newServers.length && (takeNew || oldIndex >= oldServers.length)) {
      order.push(newServers[newIndex++]!);
    } else {
      order.push(oldServers[oldIndex++]!);
    }
  }
  return { move: true, order, why: 'removed' };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}
