import { describe, expect, it } from 'vitest';
import { exclusiveRule } from './mutex';
import { sortChildren } from './node-names';

const node = (seq: number) =>
  `_c_0f8fad5b-d9cb-469f-a165-${String(seq).padStart(12, '0')}-lock-${String(seq).padStart(10, '0')}`;

function decide(names: string[], ours: string) {
  const children = sortChildren(names);
  return exclusiveRule(
    children,
    children.findIndex((child) => child.name === ours),
  );
}

describe('exclusiveRule', () => {
  it('holds when first', () => {
    expect(decide([node(3), node(4)], node(3))).toEqual({ holds: true });
  });

  it('waits for the node just before it, trusting its listing when that node was first', () => {
    const next = decide([node(3), node(4)], node(4));
    expect(next).toMatchObject({ holds: false, relist: false });
    expect(next.holds === false && next.waitFor !== 'children' && next.waitFor.name).toBe(node(3));
  });

  it('lists again when others stood before its predecessor (they may have left meanwhile)', () => {
    const later = decide([node(3), node(4), node(5)], node(5));
    expect(later).toMatchObject({ holds: false, relist: true });
    expect(later.holds === false && later.waitFor !== 'children' && later.waitFor.name).toBe(
      node(4),
    );
  });
});
