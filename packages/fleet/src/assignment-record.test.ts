/**
 * The assignment as written in `<path>/members`: what each member reads back from it, that a
 * different item set reads nothing, and that anything else there is no assignment.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeAssignment,
  encodeAssignment,
  itemSetDigest,
  itemsGiven,
  ownersOf,
} from './assignment-record';

const items = Array.from({ length: 40 }, (_, at) => `item-${String(at).padStart(2, '0')}`);
const members = Array.from({ length: 37 }, (_, at) => `m${at}`);

function sample() {
  const targets = new Map(items.map((item, at) => [item, members[at % 37] as string]));
  targets.delete('item-05'); // nobody
  const poison = new Map([['item-05', { member: 'm1', code: 'NoAuth', message: 'no' }]]);
  const digest = itemSetDigest(items);
  const data = encodeAssignment({ members, coordinator: 'm0', items, digest, targets, poison });
  return { targets, digest, data };
}

describe('the assignment record', () => {
  it('gives each member its items, and every owner by name', () => {
    const { targets, digest, data } = sample();
    const record = decodeAssignment(data);
    expect(record).toMatchObject({ coordinator: 'm0', count: 40, width: 2, members });
    if (!record) return;
    for (const member of members) {
      const mine = items.filter((item) => targets.get(item) === member);
      expect(itemsGiven(record, member, items, digest)).toEqual(mine);
    }
    expect(itemsGiven(record, 'stranger', items, digest)).toEqual([]);
    expect(ownersOf(record, items)).toEqual(targets);
    expect(record.poison['item-05']).toEqual({ member: 'm1', code: 'NoAuth', message: 'no' });
  });

  it('reads nothing for another item set (the member keeps what it has)', () => {
    const { data } = sample();
    const record = decodeAssignment(data);
    const other = items.slice(1);
    expect(record && itemsGiven(record, 'm1', other, itemSetDigest(other))).toBeUndefined();
  });

  it('digests differ for different sets, and for the same names split differently', () => {
    expect(itemSetDigest(['a', 'b'])).toBe(itemSetDigest(['a', 'b']));
    expect(itemSetDigest(['a', 'b'])).not.toBe(itemSetDigest(['a']));
    expect(itemSetDigest(['ab'])).not.toBe(itemSetDigest(['a', 'b']));
  });

  it('is no assignment when the data is anything else', () => {
    expect(decodeAssignment(Buffer.alloc(0))).toBeUndefined();
    expect(decodeAssignment(Buffer.from('10.0.0.1:80'))).toBeUndefined();
    expect(decodeAssignment(Buffer.from('{"v":2}'))).toBeUndefined();
    expect(decodeAssignment(Buffer.from('{"v":1,'))).toBeUndefined();
  });

  it('takes a few bytes an item: 10,000 items over 100 members fit in 21 KB', () => {
    const many = Array.from({ length: 10_000 }, (_, at) => `tenant-${at}`).sort();
    const ids = Array.from({ length: 100 }, (_, at) => `worker-${at}`);
    const targets = new Map(many.map((item, at) => [item, ids[at % 100] as string]));
    const data = encodeAssignment({
      members: ids,
      coordinator: 'worker-0',
      items: many,
      digest: itemSetDigest(many),
      targets,
      poison: new Map(),
    });
    expect(data.length).toBeLessThan(21_500);
  });
});
