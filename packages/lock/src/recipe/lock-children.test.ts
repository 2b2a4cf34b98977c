import { describe, expect, it } from 'vitest';
import {
  isRecipeNodeName,
  parseChild,
  protectedName,
  sequenceOf,
  sortChildren,
} from './lock-children';

const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('node names', () => {
  it('parses Curator and kazoo names with their order key and kind', () => {
    expect(parseChild(`_c_${uuid}-lock-0000000007`)).toEqual({
      name: `_c_${uuid}-lock-0000000007`,
      key: '0000000007',
      order: 7,
      kind: 'exclusive',
      protectedPrefix: `_c_${uuid}-`,
    });
    expect(parseChild(`_c_${uuid}-__READ__0000000003`)).toMatchObject({
      key: '0000000003',
      kind: 'read',
    });
    expect(parseChild(`_c_${uuid}-__WRIT__0000000004`)).toMatchObject({
      key: '0000000004',
      kind: 'write',
    });
    expect(parseChild(`_c_${uuid}-latch-0000000001`)).toMatchObject({
      key: '0000000001',
      kind: 'latch',
    });
    expect(parseChild('8d1c4b0e1f2a4a1c9d0e7b6a5c4d3e2f__lock__0000000005')).toMatchObject({
      key: '0000000005',
      kind: 'write',
      protectedPrefix: undefined,
    });
    expect(parseChild('8d1c4b0e1f2a4a1c9d0e7b6a5c4d3e2f__rlock__0000000006')).toMatchObject({
      key: '0000000006',
      kind: 'read',
    });
    expect(parseChild('something-else')).toMatchObject({
      key: 'something-else',
      kind: 'other',
      order: Number.POSITIVE_INFINITY,
    });
  });

  it('sorts every recipe by sequence, whatever the prefix', () => {
    const names = [
      `_c_${uuid}-lock-0000000012`,
      'abcd__lock__0000000010',
      `_c_ffffffff-d9cb-469f-a165-70867728950e-lock-0000000011`,
      `_c_00000000-d9cb-469f-a165-70867728950e-lock-0000000013`,
    ];
    expect(sortChildren(names).map((child) => child.key)).toEqual([
      '0000000010',
      '0000000011',
      '0000000012',
      '0000000013',
    ]);
  });

  it('keeps the server order for ties, as Curator does', () => {
    const names = [`_c_${uuid}-__READ__0000000004`, `_c_${uuid}-__WRIT__0000000004`];
    expect(sortChildren(names).map((child) => child.kind)).toEqual(['read', 'write']);
  });

  it('draws a fresh protected prefix per call', () => {
    const a = protectedName('lock-');
    const b = protectedName('lock-');
    expect(a.prefix).not.toBe(b.prefix);
    expect(a.name).toMatch(/^_c_[0-9a-f-]{36}-lock-$/);
  });

  it('reads sequences, including wrapped negative ones', () => {
    expect(sequenceOf('x-lock-0000000042')).toBe(42);
    expect(sequenceOf('x-lock--2147483648')).toBe(-2147483648);
    expect(sequenceOf('x-lock--000000005')).toBe(-5);
    expect(sequenceOf('nothing')).toBeUndefined();
  });

  it('recognises recipe nodes in paths', () => {
    expect(isRecipeNodeName(`_c_${uuid}-lock-0000000001`)).toBe(true);
    expect(isRecipeNodeName('abc__lock__0000000001')).toBe(true);
    expect(isRecipeNodeName('orders')).toBe(false);
  });
});
