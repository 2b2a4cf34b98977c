/**
 * The checked item set: shared by the members of a process given the same array (checked
 * once), sorted and distinct, refused with a typed error naming the first bad item; and the
 * chunks a set is stored in, read back only when they are that set.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkItemSet, SET_CHUNK_BYTES, setChunks, setFromChunks } from './item-set';

describe('the item set', () => {
  it('is checked once per process: the same array gives the same set', () => {
    const items = Array.from({ length: 100_000 }, (_, at) => `item-${String(at).padStart(5, '0')}`);
    const first = checkItemSet(items, '/fleet/p', 'partition');
    // 250 members of one process: one check of the 100,000 names, one sorted copy.
    for (let member = 0; member < 250; member++) {
      expect(checkItemSet(items, '/fleet/p', 'partition')).toBe(first);
    }
    // Another array with the same names is another set (its own check), equal by digest.
    const copy = checkItemSet([...items], '/fleet/p', 'partition');
    expect(copy).not.toBe(first);
    expect(copy.digest).toBe(first.digest);
    expect(first.items).toHaveLength(100_000);
    expect(first.indexOf('item-00042')).toBe(42);
    expect(first.has('item-99999')).toBe(true);
    expect(first.has('item-100000')).toBe(false);
  });

  it('sorts, and refuses an item twice, a bad name, a reserved one, with the item named', () => {
    expect(checkItemSet(['b', 'a', 'c'], '/f', 'partition').items).toEqual(['a', 'b', 'c']);
    expect(() => checkItemSet(['a', 'b', 'a'], '/f', 'partition')).toThrow(/"a" twice/);
    expect(() => checkItemSet(['ok', 'a/b'], '/f', 'partition')).toThrow(/items\[1\] "a\/b"/);
    expect(() => checkItemSet(['locks'], '/f', 'partition')).toThrow(/reserved/);
    expect(() =>
      checkItemSet(['_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001'], '/f', 'partition'),
    ).toThrow(/another recipe's node/);
    expect(() => checkItemSet(['x'.repeat(256)], '/f', 'partition')).toThrow(/at most 255 bytes/);
    expect(checkItemSet(['é', 'x'.repeat(255)], '/f', 'partition').items).toHaveLength(2);
  });

  it('is stored in chunks of at most 512 KB, read back only as itself', () => {
    // 10,000 names of 255 random bytes (hex, barely compressible): several chunks.
    const items = Array.from({ length: 10_000 }, () =>
      randomBytes(128).toString('hex').slice(0, 255),
    );
    const set = checkItemSet(items, '/f', 'partition');
    const chunks = setChunks(set);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(SET_CHUNK_BYTES);
    expect(setFromChunks(chunks, set.items.length, set.digest)?.items).toEqual(set.items);
    expect(setFromChunks(chunks.slice(1), set.items.length, set.digest)).toBeUndefined();
    expect(setFromChunks(chunks, set.items.length, 'another')).toBeUndefined();
    const empty = checkItemSet([], '/f', 'partition');
    expect(setFromChunks(setChunks(empty), 0, empty.digest)?.items).toEqual([]);
  });
});
