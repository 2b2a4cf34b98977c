/**
 * What ZooKeeper writes once a parent's sequence counter (its cversion, a signed 32-bit int that
 * every child create and delete bumps) wraps, and how zkrx reads it. Known zkrx issues are
 * pinned with `it.fails`: each turns red once fixed, so the pin can be dropped then.
 */
import { sequenceOf, sortChildren } from '@zkrx/lock';
import { describe, expect, it } from 'vitest';

const uuid = '0f4e2c1a-9b7d-4e3f-8a6b-5c4d3e2f1a0b';
/** A mutex node name as ZooKeeper completes it: `String.format("%010d", cversion)`. */
const node = (sequence: number) =>
  `_c_${uuid}-lock-${String(sequence)
    .padStart(10, '0')
    .replace(/^(0*)-/, '-$1')}`;

describe('sequence numbers across the wrap', () => {
  it('writes what ZooKeeper writes (%010d: the sign takes one of the ten places)', () => {
    expect(node(7)).toMatch(/-lock-0000000007$/);
    expect(node(-5)).toMatch(/-lock--000000005$/);
    expect(node(-2147483648)).toMatch(/-lock--2147483648$/);
  });

  it('reads ten-digit sequences', () => {
    expect(sequenceOf(node(2147483647))).toBe(2147483647);
    expect(sequenceOf(node(-2147483648))).toBe(-2147483648);
  });

  // zkrx issue: "-000000005" (cversion -5, written after ~4.29e9 changes) has nine digits after
  // the sign, so sequenceOf's /^-?\d{10}$/ rejects it and returns undefined.
  it.fails('reads a wrapped sequence of nine digits ("-000000005" is -5)', () => {
    expect(sequenceOf(node(-5))).toBe(-5);
  });

  it('orders keys as text, like Curator (so Curator and zkrx agree even across the wrap)', () => {
    const created = [node(2147483646), node(2147483647), node(-2147483648), node(-2147483647)];
    expect(sortChildren(created).map((child) => child.name)).toEqual([
      node(-2147483647),
      node(-2147483648),
      node(2147483646),
      node(2147483647),
    ]);
  });

  // zkrx issue (shared with Curator, whose order zkrx follows): across the wrap, text order is not
  // creation order. A node created after 2147483647 sorts before it, so while the holder of
  // ...2147483647 holds, the newcomer ...-2147483648 is first in everyone's sort and holds too
  // (two holders). Each of ~2^31 cversion changes is a create or a delete, so a persistent lock
  // path at 1000 acquisitions/s wraps after about 12 days; Curator's container parents reset when
  // the server removes them empty, kazoo's persistent ones never do.
  it.fails('orders nodes across the wrap in creation order', () => {
    const created = [node(2147483647), node(-2147483648), node(-2147483647)];
    expect(sortChildren(created).map((child) => child.name)).toEqual(created);
  });
});
