/**
 * The delay between two attempts of `joinPartition` to join: doubled at each failure in a row up
 * to the cap, drawn between half and all of it.
 */
import { describe, expect, it } from 'vitest';
import { retryDelay } from './join-partition';

describe('retryDelay', () => {
  it('doubles with each failure in a row, up to the cap', () => {
    const top = () => 0.999_999;
    expect(
      [1, 2, 3, 4, 5, 6, 7].map((failures) => Math.round(retryDelay(failures, 1_000, 30_000, top))),
    ).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('is drawn between half and all of the full delay', () => {
    expect(retryDelay(3, 1_000, 30_000, () => 0)).toBe(2_000);
    expect(retryDelay(3, 1_000, 30_000, () => 0.5)).toBe(3_000);
    for (let draw = 0; draw < 100; draw++) {
      const delay = retryDelay(4, 1_000, 30_000);
      expect(delay).toBeGreaterThanOrEqual(4_000);
      expect(delay).toBeLessThan(8_000);
    }
  });

  it('is 0 when the base is 0', () => {
    expect(retryDelay(5, 0, 30_000)).toBe(0);
  });
});
