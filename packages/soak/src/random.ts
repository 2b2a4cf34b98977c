/**
 * A small seeded pseudo-random generator (sfc32 seeded through splitmix32): the nemesis and
 * the workers draw everything from it, so a run's plan is reproducible from the seed it prints.
 */

/** Draws numbers from one stream of a seed. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number;
  /** A float in [min, max). */
  between(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** One key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  /** `count` distinct elements of `items`, in `items`' order. */
  sample<T>(items: readonly T[], count: number): T[];
}

/** splitmix32: spreads a 32-bit seed (and a stream label) over a generator's state. */
function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A 32-bit hash of a text (FNV-1a), to derive a stream from a label. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * A generator for `seed`, on its own stream `label` (e.g. `nemesis`, `worker-3`): streams of
 * one seed do not depend on each other, so adding draws to one never shifts another.
 *
 * ## Example
 *
 * ```ts
 * const random = createRandom(42, 'nemesis');
 * console.log(random.int(1, 6) === createRandom(42, 'nemesis').int(1, 6));
 * // Output: true
 * ```
 *
 * @param seed Any 32-bit integer.
 * @param label The stream's name.
 * @return The generator.
 */
export function createRandom(seed: number, label = ''): Random {
  const mix = splitmix32((seed ^ hash32(label)) >>> 0);
  let a = mix();
  let b = mix();
  let c = mix();
  let d = mix();
  const next = (): number => {
    // sfc32
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let index = 0; index < 12; index++) next();
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    between: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    weighted: (weights) => {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      const total = entries.reduce((sum, [, weight]) => sum + Math.max(0, weight), 0);
      if (total <= 0) throw new RangeError('weighted: no positive weight');
      let left = next() * total;
      for (const [key, weight] of entries) {
        left -= Math.max(0, weight);
        if (left < 0) return key;
      }
      return entries[entries.length - 1]![0];
    },
    sample: (items, count) => {
      const indexes = items.map((_, index) => index);
      for (let index = indexes.length - 1; index > 0; index--) {
        const other = Math.floor(next() * (index + 1));
        [indexes[index], indexes[other]] = [indexes[other]!, indexes[index]!];
      }
      return indexes
        .slice(0, Math.min(count, items.length))
        .sort((x, y) => x - y)
        .map((index) => items[index] as (typeof items)[number]);
    },
  };
  return random;
}

/** A fresh seed when none is given: a 32-bit integer, printed so the run can be replayed. */
export function freshSeed(): number {
  return (Date.now() ^ (process.pid << 16) ^ Math.floor(Math.random() * 2 ** 32)) >>> 0;
}
