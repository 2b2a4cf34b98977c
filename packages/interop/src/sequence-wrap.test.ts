/**
 * What ZooKeeper writes once a parent's sequence counter (a signed 32-bit int counting the
 * children created under it; deletes do not move it) wraps, and how zkrx reads and orders it.
 */
import { sequenceOf, sortChildren } from '@zkrx/lock/recipe';
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

  it('reads a wrapped sequence of nine digits ("-000000005" is -5)', () => {
    expect(sequenceOf(node(-5))).toBe(-5);
  });

  it('orders by sequence before the wrap, exactly as Curator and kazoo do', () => {
    const created = [node(1), node(2), node(10), node(2147483647)];
    expect(sortChildren([...created].reverse()).map((child) => child.name)).toEqual(created);
  });

  // Curator orders keys as text, which is not creation order across the wrap: a node created
  // after 2147483647 would sort first and hold alongside the holder. zkrx reads sequences as
  // unsigned 32-bit numbers, which keeps creation order through the first wrap (2^32 changes of
  // the parent: years at thousands of acquisitions per second). Mixed with Curator nodes at the
  // wrap, the two orders disagree: Curator's side is broken there anyway (see the lock README).
  it('orders nodes across the wrap in creation order', () => {
    const created = [
      node(2147483646),
      node(2147483647),
      node(-2147483648),
      node(-2147483647),
      node(-5),
      node(-1),
    ];
    expect(sortChildren([...created].reverse()).map((child) => child.name)).toEqual(created);
  });
});
