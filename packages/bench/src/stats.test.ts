import { describe, expect, it } from 'vitest';
import { ms, percentile, round } from './stats';

describe('percentile', () => {
  it('is nearest-rank, like the peers', () => {
    const samples = [5, 1, 3, 2, 4];
    expect(percentile(samples, 50)).toBe(3);
    expect(percentile(samples, 99)).toBe(5);
    expect(percentile(samples, 0)).toBe(1);
    expect(
      percentile(
        Float64Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
    expect(
      percentile(
        Float64Array.from({ length: 1000 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(990);
  });

  it('reports -1 without samples and leaves its input alone', () => {
    expect(percentile([], 50)).toBe(-1);
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });
});

describe('rounding', () => {
  it('rounds like the peers', () => {
    expect(round(1234.5678, 1)).toBe(1234.6);
    expect(ms(0.123456)).toBe(0.123);
    expect(ms(-1)).toBe(-1);
  });
});
