/**
 * A member's assignment node as the coordinator writes it: positions read back as written, the
 * smaller of a bitmap and the gaps, at most n/8 bytes, and anything else read as no assignment.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeAssignmentNode,
  decodePositions,
  encodeAssignmentNode,
  encodePositions,
} from './assignment-node';

describe('the assignment node', () => {
  it('reads back every position list as written, a share or most of the set', () => {
    for (const count of [1, 7, 8, 9, 100, 1_000, 100_000]) {
      const lists = [
        [],
        [0],
        [count - 1],
        Array.from({ length: count }, (_, at) => at),
        Array.from({ length: Math.ceil(count / 3) }, (_, at) => at * 3).filter((at) => at < count),
        Array.from({ length: Math.min(count, 100) }, (_, at) => Math.floor((at * count) / 100)),
      ];
      for (const positions of lists) {
        const unique = [...new Set(positions)].sort((a, b) => a - b);
        expect(decodePositions(encodePositions(unique, count), count)).toEqual(unique);
      }
    }
  });

  it('is small: a share of 100 of 100,000 items in a few hundred bytes, any share within n/8', () => {
    const count = 100_000;
    const share = Array.from({ length: 100 }, (_, at) => at * 997);
    expect(encodePositions(share, count).length).toBeLessThan(400);
    const half = Array.from({ length: count / 2 }, (_, at) => at * 2);
    // base64 of a bitmap of n/8 bytes (and its letter)
    expect(encodePositions(half, count).length).toBeLessThanOrEqual(
      Math.ceil((count / 8) * (4 / 3)) + 2,
    );
  });

  it('decodes what it encodes, and refuses anything else', () => {
    const node = { set: 'digest', count: 10, items: [1, 4, 9], poison: [2] };
    expect(decodeAssignmentNode(encodeAssignmentNode(node))).toEqual(node);
    for (const data of [
      '',
      'x',
      '{}',
      '{"v":1}',
      '{"v":2,"set":"d","count":2,"items":"g_w","poison":""}',
    ]) {
      expect(decodeAssignmentNode(Buffer.from(data))).toBeUndefined();
    }
    // A position past the set's end is refused.
    expect(decodePositions(encodePositions([12], 20), 10)).toBeUndefined();
  });
});
