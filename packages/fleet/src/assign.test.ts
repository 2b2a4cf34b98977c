/**
 * The assignment's promises on every small case: balanced, a fixed point, the fewest moves any
 * balanced assignment could make (against a brute force), and convergence without moving an item
 * twice when its steps (a release, an acquisition) happen one at a time in any order.
 */
import { describe, expect, it } from 'vitest';
import { assign, movesOf } from './assign';

/** A small deterministic random generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, at) => `${prefix}${String(at).padStart(3, '0')}`);

/** Random owners: each item owned by one of `members`, by someone else, or by nobody. */
function randomOwners(next: () => number, members: readonly string[], items: readonly string[]) {
  const owners = new Map<string, string>();
  for (const item of items) {
    const pick = next();
    if (pick < 0.15) continue;
    if (pick < 0.2) owners.set(item, 'gone-member');
    else owners.set(item, members[Math.floor(next() * members.length)] ?? 'gone-member');
  }
  return owners;
}

function live(owners: ReadonlyMap<string, string>, members: readonly string[]) {
  return new Map([...owners].filter(([, owner]) => members.includes(owner)));
}

/** The most items any balanced assignment keeps with their live owner (brute force). */
function mostKept(
  members: readonly string[],
  items: readonly string[],
  owners: ReadonlyMap<string, string>,
) {
  const m = members.length;
  const base = Math.floor(items.length / m);
  const extra = items.length % m;
  const counts = members.map(
    (member) => items.filter((item) => owners.get(item) === member).length,
  );
  let best = 0;
  for (let mask = 0; mask < 1 << m; mask++) {
    let bits = 0;
    for (let at = 0; at < m; at++) if (mask & (1 << at)) bits += 1;
    if (bits !== extra) continue;
    let kept = 0;
    for (let at = 0; at < m; at++) {
      kept += Math.min(counts[at] as number, base + (mask & (1 << at) ? 1 : 0));
    }
    best = Math.max(best, kept);
  }
  return best;
}

function countsOf(result: ReadonlyMap<string, string>, members: readonly string[]) {
  return members.map((member) => [...result.values()].filter((owner) => owner === member).length);
}

describe('assign', () => {
  it('is balanced, a fixed point, and keeps the most items any balanced assignment could', () => {
    const next = random(20);
    let cases = 0;
    for (let m = 1; m <= 5; m++) {
      for (let n = 0; n <= 13; n++) {
        for (let round = 0; round < 30; round++) {
          const members = names('member-', m);
          const items = names('item-', n);
          const owners = randomOwners(next, members, items);
          const result = assign({ members, items, owners });
          expect([...result.keys()].sort()).toEqual(items);
          for (const count of countsOf(result, members)) {
            expect(count === Math.floor(n / m) || count === Math.ceil(n / m)).toBe(true);
          }
          const liveOwners = live(owners, members);
          const kept = [...liveOwners].filter(([item, owner]) => result.get(item) === owner);
          expect(kept.length).toBe(mostKept(members, items, liveOwners));
          expect(assign({ members, items, owners: result })).toEqual(result);
          cases += 1;
        }
      }
    }
    expect(cases).toBe(5 * 14 * 30);
  });

  it('is deterministic: the same inputs in another order give the same answer', () => {
    const members = ['c', 'a', 'b'];
    const items = names('item-', 10);
    const owners = new Map([
      ['item-003', 'a'],
      ['item-001', 'c'],
      ['item-007', 'a'],
    ]);
    const reordered = new Map([...owners].reverse());
    expect(assign({ members, items, owners: reordered })).toEqual(
      assign({ members, items, owners }),
    );
  });

  it('3 → 4 → 3 members over 12 and 120 items: a join takes the surplus, a leave moves only its own', () => {
    for (const n of [12, 120]) {
      const items = names('item-', n);
      const three = ['a', 'b', 'c'];
      const start = assign({ members: three, items, owners: new Map() });
      expect(countsOf(start, three)).toEqual([n / 3, n / 3, n / 3]);
      const four = [...three, 'd'];
      const joined = assign({ members: four, items, owners: start });
      expect(countsOf(joined, four)).toEqual([n / 4, n / 4, n / 4, n / 4]);
      expect(movesOf(start, joined)).toBe(n / 4);
      // `b` leaves: only its items move.
      const left = ['a', 'c', 'd'];
      const after = assign({ members: left, items, owners: live(joined, left) });
      expect(countsOf(after, left)).toEqual([n / 3, n / 3, n / 3]);
      expect(movesOf(live(joined, left), after)).toBe(0);
      for (const [item, owner] of joined) {
        if (owner !== 'b') expect(after.get(item)).toBe(owner);
      }
    }
  });

  it('item set changes: added items go where there is room, removals move others only for balance', () => {
    const members = ['a', 'b'];
    const owners = new Map([
      ['1', 'a'],
      ['2', 'a'],
      ['3', 'b'],
      ['4', 'b'],
    ]);
    const added = assign({ members, items: ['1', '2', '3', '4', '5', '6'], owners });
    expect(movesOf(owners, added)).toBe(0);
    expect(countsOf(added, members)).toEqual([3, 3]);
    // One of a's removed: (1, 2) is balanced for 3 items, nothing moves.
    const one = assign({ members, items: ['1', '3', '4'], owners });
    expect(movesOf(owners, one)).toBe(0);
    // Both of a's removed: balance needs one of b's.
    const two = assign({ members, items: ['3', '4'], owners });
    expect(movesOf(owners, two)).toBe(1);
  });

  it('converges one step at a time, in any order, with no item moved twice', () => {
    // Members act on what they see: an owner releases an item the result gives to another, an
    // item nobody holds is taken by the member the result names. Each step changes the owners
    // and the result is computed again; the fleet must end at a fixed point having moved each
    // item at most once, and no more items than the first result said.
    const next = random(7);
    for (let round = 0; round < 400; round++) {
      const m = 1 + Math.floor(next() * 5);
      const n = Math.floor(next() * 14);
      const members = names('member-', m);
      const items = names('item-', n);
      const owners = live(randomOwners(next, members, items), members);
      const planned = movesOf(owners, assign({ members, items, owners }));
      const moved = new Set<string>();
      let releases = 0;
      for (let steps = 0; ; steps++) {
        expect(steps).toBeLessThan(4 * n + 2);
        const target = assign({ members, items, owners });
        const pending = items.filter((item) => owners.get(item) !== target.get(item));
        if (pending.length === 0) break;
        const item = pending[Math.floor(next() * pending.length)] as string;
        if (owners.has(item)) {
          owners.delete(item);
          expect(moved.has(item)).toBe(false);
          moved.add(item);
          releases += 1;
        } else owners.set(item, target.get(item) as string);
      }
      expect(releases).toBe(planned);
    }
  });

  it('items only some members list go to one of them; the rest is balanced as ever', () => {
    // A rolling deploy: a and b run the old set (items 0-11), c and d the new one (1-12).
    const members = ['a', 'b', 'c', 'd'];
    const items = names('item-', 13);
    const lists = new Map<string, readonly number[]>([
      ['item-000', [0, 1]],
      ['item-012', [2, 3]],
    ]);
    const next = random(3);
    for (let round = 0; round < 50; round++) {
      const owners = randomOwners(next, members, items);
      const result = assign({ members, items, owners, lists });
      expect([...result.keys()].sort()).toEqual(items);
      expect(['a', 'b']).toContain(result.get('item-000'));
      expect(['c', 'd']).toContain(result.get('item-012'));
      for (const count of countsOf(result, members)) expect([3, 4]).toContain(count);
      // A fixed point, listing or not.
      expect(assign({ members, items, owners: result, lists })).toEqual(result);
    }
    // Kept where its owner lists it; moved off one that does not.
    const owners = new Map([
      ['item-000', 'a'],
      ['item-012', 'a'],
    ]);
    const result = assign({ members, items, owners, lists });
    expect(result.get('item-000')).toBe('a');
    expect(['c', 'd']).toContain(result.get('item-012'));
    // An item only one member lists goes to it even over its quota.
    const only = assign({
      members: ['a', 'b'],
      items: ['1', '2', '3', '4'],
      owners: new Map(),
      lists: new Map([
        ['1', [0]],
        ['2', [0]],
        ['3', [0]],
      ]),
    });
    expect([...only].filter(([, owner]) => owner === 'a').map(([item]) => item)).toEqual([
      '1',
      '2',
      '3',
    ]);
    expect(only.get('4')).toBe('b');
  });

  it('without members, assigns nothing', () => {
    expect(assign({ members: [], items: ['1'], owners: new Map() })).toEqual(new Map());
  });
});
