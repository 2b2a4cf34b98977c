import { describe, expect, it } from 'vitest';
import { sortChildren } from './node-names';
import { exclusiveRule } from './queue-rules';

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

  it('waits for the node just before it, wherever it stands in line', () => {
    const next = decide([node(3), node(4)], node(4));
    expect(next).toEqual({ holds: false, waitFor: expect.objectContaining({ name: node(3) }) });
    const later = decide([node(3), node(4), node(5)], node(5));
    expect(later).toEqual({ holds: false, waitFor: expect.objectContaining({ name: node(4) }) });
  });

  it('holds after a sequence restart only when first of the listing (the old numbers are gone)', () => {
    // The path was reaped and made again: numbers start over below the ones held before.
    expect(decide([node(0), node(1)], node(1))).toMatchObject({ holds: false });
    expect(decide([node(1)], node(1))).toEqual({ holds: true });
  });
});
