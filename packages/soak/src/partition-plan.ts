/**
 * The fleet mode's churn plan, drawn from the seed: who is a member at first, the first item set,
 * and rounds of a storm (faults from the nemesis, and joins, leaves and item-set changes at
 * random times, all at once) followed by a calm (one change at a time, each followed by a quiet
 * wait long enough for the fleet to converge). The checker judges balance at the end of every
 * quiet period and stickiness across each change made alone (partition-check.ts). The same seed
 * gives the same plan.
 */
import { createRandom } from './random';

/** One change the coordinator makes to the fleet. */
export type FleetChange =
  | { readonly kind: 'join'; readonly worker: number }
  | { readonly kind: 'leave'; readonly worker: number }
  | { readonly kind: 'items'; readonly items: readonly string[] };

/** A storm then a calm. */
export interface FleetRound {
  /** How long the storm lasts (ms): faults and changes overlap. */
  readonly stormMs: number;
  /** The storm's changes, at ms from its start. */
  readonly storm: readonly { readonly at: number; readonly change: FleetChange }[];
  /** The calm's changes: each alone, after a quiet wait and followed by one. */
  readonly calm: readonly FleetChange[];
}

export interface FleetPlan {
  /** Workers that join at the start. */
  readonly initialMembers: readonly number[];
  readonly initialItems: readonly string[];
  /** The calm's wait after each change (and before the first): the checker's settle time plus a margin. */
  readonly quietMs: number;
  readonly rounds: readonly FleetRound[];
  /**
   * After the rounds, a rolling deploy (the `deploy-fleet` modes): every worker replaced, one at
   * a time in `order`, by one stating `items` (the set at the rounds' end with a few items
   * replaced), each replacement followed by a quiet wait.
   */
  readonly deploy?: { readonly items: readonly string[]; readonly order: readonly number[] };
}

export interface FleetPlanOptions {
  readonly seed: number;
  readonly workers: number;
  /** The first item set's size (3 a worker in the short runs). */
  readonly items: number;
  /** The mode's time budget (ms): storms and calms together. */
  readonly durationMs: number;
  readonly quietMs: number;
  /** Changes made alone in each calm. */
  readonly calmChanges: number;
  /** Mean time between two changes in a storm (ms). */
  readonly meanChangeGapMs: number;
  /** A rolling deploy after the rounds that replaces this share of the items (0.01 to 0.05). */
  readonly deployChange?: number;
}

/** A round is about this long, so that a long run has several storms. */
const ROUND_MS = 35_000;
const MIN_STORM_MS = 4_000;

/** The item names a plan draws from: `item-0` … */
export const itemName = (index: number) => `item-${index}`;

/**
 * Plans a fleet run: rounds of a storm then a calm that fill `durationMs` (at least one round,
 * storms of at least 4 s). Membership never drops below a quarter of the workers (at least 1);
 * the item set starts with `items` names and stays between a third and four thirds of that,
 * drawn from five thirds of it (`workers`, `4 × workers` and `5 × workers` for 3 a worker; a
 * removed item may come back: its lock path is made again).
 *
 * @param options The seed, the fleet and the timings.
 * @return The plan.
 */
export function planFleet(options: FleetPlanOptions): FleetPlan {
  const random = createRandom(options.seed, 'fleet');
  const { workers } = options;
  const minMembers = Math.max(1, Math.floor(workers / 4));
  const members = new Set<number>();
  for (let index = 0; index < workers - minMembers; index++) members.add(index);
  const initialMembers = [...members];
  const fewest = Math.max(1, Math.floor(options.items / 3));
  const most = Math.ceil((4 * options.items) / 3);
  const universe = Array.from({ length: Math.ceil((5 * options.items) / 3) }, (_, index) =>
    itemName(index),
  );
  let items: string[] = universe.slice(0, options.items);
  const initialItems = items;

  const nextChange = (): FleetChange => {
    const outside = Array.from({ length: workers }, (_, index) => index).filter(
      (index) => !members.has(index),
    );
    const weights: Record<string, number> = { items: 1 };
    if (outside.length > 0) weights.join = 1;
    if (members.size > minMembers) weights.leave = 1;
    const kind = random.weighted(weights);
    if (kind === 'join') {
      const worker = random.pick(outside);
      members.add(worker);
      return { kind, worker };
    }
    if (kind === 'leave') {
      const worker = random.pick([...members]);
      members.delete(worker);
      return { kind, worker };
    }
    let removed = random.int(0, 3);
    let added = random.int(removed === 0 ? 1 : 0, 3);
    removed = Math.min(removed, items.length - fewest + added);
    added = Math.min(added, most - items.length + removed);
    const gone = new Set(random.sample(items, Math.max(0, removed)));
    const kept = items.filter((item) => !gone.has(item));
    const present = new Set(items);
    const fresh = random.sample(
      universe.filter((item) => !present.has(item)),
      Math.max(0, added),
    );
    let next = [...kept, ...fresh].sort(byIndex);
    // At a bound nothing may have changed: then one item goes (there are more than the fewest).
    if (next.length === items.length && next.every((item, index) => item === items[index])) {
      const dropped = random.pick(items);
      next = items.filter((item) => item !== dropped);
    }
    items = next;
    return { kind: 'items', items };
  };

  const calmMs = (options.calmChanges + 1) * options.quietMs;
  const roundCount = Math.max(1, Math.floor(options.durationMs / ROUND_MS));
  const stormMs = Math.max(MIN_STORM_MS, options.durationMs / roundCount - calmMs);
  const rounds: FleetRound[] = [];
  for (let round = 0; round < roundCount; round++) {
    const storm: { at: number; change: FleetChange }[] = [];
    let at = random.between(0.2, 1) * options.meanChangeGapMs;
    while (at < stormMs) {
      storm.push({ at: Math.round(at), change: nextChange() });
      at += random.between(0.3, 1.7) * options.meanChangeGapMs;
    }
    const calm = Array.from({ length: options.calmChanges }, nextChange);
    rounds.push({ stormMs: Math.round(stormMs), storm, calm });
  }
  if (options.deployChange === undefined) {
    return { initialMembers, initialItems, quietMs: options.quietMs, rounds };
  }
  // The deploy's set: the last one with a share of its items replaced by names never used yet.
  const replaced = Math.max(1, Math.round(options.deployChange * items.length));
  const gone = new Set(random.sample(items, Math.min(replaced, items.length)));
  const fresh = Array.from({ length: gone.size }, (_, index) => itemName(universe.length + index));
  const deployItems = [...items.filter((item) => !gone.has(item)), ...fresh].sort(byIndex);
  // A random order (the coordinator's worker anywhere in it, last included).
  const order = Array.from({ length: workers }, (_, index) => index);
  for (let index = order.length - 1; index > 0; index--) {
    const other = Math.min(index, Math.floor(random.between(0, 1) * (index + 1)));
    [order[index], order[other]] = [order[other] as number, order[index] as number];
  }
  return {
    initialMembers,
    initialItems,
    quietMs: options.quietMs,
    rounds,
    deploy: { items: deployItems, order },
  };
}

function byIndex(a: string, b: string): number {
  return Number(a.slice(5)) - Number(b.slice(5));
}
