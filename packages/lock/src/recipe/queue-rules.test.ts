import { describe, expect, it } from 'vitest';
import { sortChildren } from './lock-children';
import { afterHandOff, exclusiveRule } from './queue-rules';

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

const named = (marker: string, seq: number) =>
  `_c_0f8fad5b-d9cb-469f-a165-${String(seq).padStart(12, '0')}-${marker}${String(seq).padStart(10, '0')}`;

describe('afterHandOff (the listing as a hand-off by our own client leaves it)', () => {
  it('drops the awaited node and every node numbered before it', () => {
    const children = sortChildren([node(1), node(2), node(3), node(4)]);
    const rest = afterHandOff(children, children[2]!);
    expect(rest.map((child) => child.name)).toEqual([node(4)]);
    expect(exclusiveRule(rest, 0)).toEqual({ holds: true });
  });

  it('keeps a read node standing where an awaited writer stood (its downgrade, numbered with it)', () => {
    const writer = named('__WRIT__', 5);
    const downgrade = `_c_1f8fad5b-d9cb-469f-a165-000000000099-__READ__${String(5).padStart(10, '0')}`;
    const children = sortChildren([node(4), writer, downgrade, named('__WRIT__', 6)]);
    const rest = afterHandOff(children, children.find((child) => child.name === writer)!);
    // The downgrade node, and the writer's place taken by a reader: a writer behind is not first.
    expect(rest.map((child) => child.kind)).toEqual(['read', 'read', 'write']);
    expect(exclusiveRule(rest, 2)).toMatchObject({ holds: false });
  });
});
