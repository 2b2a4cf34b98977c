/**
 * Unit tests of planRebalance, the Java client's rule: who moves when servers are added or
 * removed, and that the expected load comes out even (simulated over many clients, seeded).
 */
import { describe, expect, it } from 'vitest';
import { planRebalance } from './rebalance';

/** A seeded PRNG (mulberry32): the same draws every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const same = (a: string, b: string) => a === b;

/**
 * Where `clients` (spread evenly over `previous`) end after the list becomes `next`: each moves
 * to the first server of its plan's order.
 */
function simulate(previous: string[], next: string[], clients: number, seed: number) {
  const random = seeded(seed);
  const counts = new Map<string, number>(next.map((server) => [server, 0]));
  let moved = 0;
  for (let client = 0; client < clients; client++) {
    const current = previous[client % previous.length]!;
    const plan = planRebalance({ previous, next, current, same, random });
    const target = plan.move ? plan.order[0]! : current;
    if (plan.move) moved += 1;
    counts.set(target, (counts.get(target) ?? 0) + 1);
  }
  return { counts, moved };
}

describe('planRebalance', () => {
  it('stays when nothing changed, or when servers only left and its own stays', () => {
    const random = seeded(1);
    expect(
      planRebalance({ previous: ['a', 'b'], next: ['a', 'b'], current: 'a', same, random }),
    ).toEqual({ move: false });
    expect(
      planRebalance({ previous: ['a', 'b', 'c'], next: ['a', 'b'], current: 'a', same, random }),
    ).toEqual({ move: false });
  });

  it('never moves a client that is not connected', () => {
    const plan = planRebalance({
      previous: ['a'],
      next: ['b'],
      current: undefined,
      same,
      random: seeded(2),
    });
    expect(plan).toEqual({ move: false });
  });

  it('always moves a client whose server left, never to that server', () => {
    const random = seeded(3);
    for (let run = 0; run < 100; run++) {
      const plan = planRebalance({
        previous: ['a', 'b', 'c'],
        next: ['b', 'c', 'd'],
        current: 'a',
        same,
        random,
      });
      expect(plan.move).toBe(true);
      if (plan.move) {
        expect(plan.why).toBe('removed');
        expect([...plan.order].sort()).toEqual(['b', 'c', 'd']);
      }
    }
  });

  it('moves a fraction 1 − old/new to the added servers only, evening the load (3 → 5)', () => {
    const { counts, moved } = simulate(['a', 'b', 'c'], ['a', 'b', 'c', 'd', 'e'], 30_000, 4);
    // 2/5 of the clients move; every server ends with about a fifth of them.
    expect(moved / 30_000).toBeCloseTo(0.4, 1);
    for (const count of counts.values()) expect(count / 30_000).toBeCloseTo(0.2, 1);
  });

  it("spreads a removed server's clients evenly over the others (5 → 4)", () => {
    const { counts } = simulate(['a', 'b', 'c', 'd', 'e'], ['b', 'c', 'd', 'e'], 50_000, 5);
    for (const count of counts.values()) expect(count / 50_000).toBeCloseTo(0.25, 1);
  });

  it('evens the load when servers are removed and added at once (5 → 3 others and 1 new)', () => {
    // a, b leave; c, d, e stay; f joins: a's and b's clients split between the stayers and f
    // so that each of the 4 ends with a quarter.
    const { counts } = simulate(['a', 'b', 'c', 'd', 'e'], ['c', 'd', 'e', 'f'], 50_000, 6);
    for (const count of counts.values()) expect(count / 50_000).toBeCloseTo(0.25, 1);
  });

  it('moves every client of a replaced ensemble to the new servers, evenly', () => {
    const { counts } = simulate(['a', 'b', 'c'], ['d', 'e', 'f'], 30_000, 7);
    expect([...counts.keys()].sort()).toEqual(['d', 'e', 'f']);
    for (const count of counts.values()) expect(count / 30_000).toBeCloseTo(1 / 3, 1);
  });
});
