import { describe, expect, it } from 'vitest';
import { createRandom } from './random';

describe('createRandom', () => {
  it('draws the same numbers for the same seed and stream, others for another stream', () => {
    const draw = (seed: number, label: string) => {
      const random = createRandom(seed, label);
      return Array.from({ length: 5 }, () => random.next());
    };
    expect(draw(1, 'a')).toEqual(draw(1, 'a'));
    expect(draw(1, 'a')).not.toEqual(draw(1, 'b'));
    expect(draw(1, 'a')).not.toEqual(draw(2, 'a'));
  });

  it('stays in range: int, between, pick, weighted, sample', () => {
    const random = createRandom(9, 'range');
    for (let index = 0; index < 1_000; index++) {
      const value = random.int(3, 5);
      expect(value >= 3 && value <= 5 && Number.isInteger(value)).toBe(true);
      const float = random.between(1, 2);
      expect(float >= 1 && float < 2).toBe(true);
    }
    expect(['x', 'y']).toContain(random.pick(['x', 'y']));
    expect(random.weighted({ never: 0, always: 1 })).toBe('always');
    const sample = random.sample([1, 2, 3, 4, 5], 3);
    expect(new Set(sample).size).toBe(3);
    expect(sample).toEqual([...sample].sort());
    expect(() => random.pick([])).toThrow(RangeError);
  });
});
