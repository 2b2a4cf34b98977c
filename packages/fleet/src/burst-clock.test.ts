import { describe, expect, it } from 'vitest';
import { BURST_LONGEST_MS, BURST_QUIET_MS, BurstClock, FIRST_LONGEST_MS } from './burst-clock';

/**
 * Changes every `everyMs` from `fromMs` until `untilMs`; returns the first time waitMs says
 * "write now".
 */
function firstWrite(
  first: boolean,
  everyMs: number,
  untilMs: number,
  clock = new BurstClock(),
  fromMs = 0,
): number | undefined {
  for (let now = fromMs; now <= untilMs; now += everyMs) {
    clock.changed(now, false);
    if (clock.waitMs(now, first) === 0) return now;
  }
  return undefined;
}

describe('BurstClock', () => {
  it('a quiet change waits out the calm, then writes', () => {
    const clock = new BurstClock();
    clock.changed(1_000, false);
    expect(clock.waitMs(1_000, true)).toBe(BURST_QUIET_MS);
    expect(clock.waitMs(1_000 + BURST_QUIET_MS, true)).toBe(0);
  });

  it("a fleet's first assignment is written within 10 s of the first join though joins never calm", () => {
    // Joins every 60 ms for a minute: never 150 ms quiet. Without the bound this never writes.
    expect(firstWrite(true, 60, 60_000)).toBe(FIRST_LONGEST_MS - (FIRST_LONGEST_MS % 60) + 60);
    expect(firstWrite(true, 60, 60_000)).toBeLessThanOrEqual(FIRST_LONGEST_MS + 60);
  });

  it('a later burst is written within 3 s of its start though it never calms', () => {
    // Its first change is written at once (nothing says more will come); the ones right after
    // it wait for the burst, at most 3 s from its start.
    const clock = new BurstClock();
    clock.changed(0, false);
    expect(clock.waitMs(0, false)).toBe(0);
    clock.ended();
    const written = firstWrite(false, 60, 60_000, clock, 60);
    expect(written).toBeGreaterThanOrEqual(BURST_LONGEST_MS);
    expect(written).toBeLessThanOrEqual(BURST_LONGEST_MS + 60);
  });

  it('after an assignment, a lone change is written at once; a new item set waits for the others', () => {
    const clock = new BurstClock();
    clock.changed(0, false);
    clock.ended();
    clock.changed(10_000, false);
    expect(clock.waitMs(10_000, false)).toBe(0);
    clock.ended();
    clock.changed(20_000, true);
    expect(clock.waitMs(20_000, false)).toBe(BURST_QUIET_MS);
  });
});
