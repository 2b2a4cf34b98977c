/**
 * The take window: opens by one for each acquisition the server queues fast (doubling in a round
 * trip), up to 128; halves once per target period when answers come late or a connection is
 * lost under it; never below one (a member always makes progress).
 */
import { describe, expect, it } from 'vitest';
import { MAX_WINDOW, START_WINDOW, TakeWindow } from './take-window';

describe('the take window', () => {
  it('opens by one for each fast answer, up to the most', () => {
    const window = new TakeWindow(1_000);
    expect(window.limit).toBe(START_WINDOW);
    window.answered(0, 10);
    expect(window.limit).toBe(START_WINDOW + 1);
    for (let at = 0; at < 1_000; at++) window.answered(at, at + 999);
    expect(window.limit).toBe(MAX_WINDOW);
  });

  it('halves for a late answer, once per target period however many come late', () => {
    const window = new TakeWindow(1_000);
    for (let at = 0; at < 200; at++) window.answered(0, 5);
    expect(window.limit).toBe(MAX_WINDOW);
    // A burst of late answers in one period: one cut.
    for (let at = 0; at < 50; at++) window.answered(0, 5_000 + at);
    expect(window.limit).toBe(MAX_WINDOW / 2);
    // Late answers a period later: another cut; a lost connection counts the same.
    window.answered(5_000, 7_000);
    expect(window.limit).toBe(MAX_WINDOW / 4);
    window.congested(8_000);
    expect(window.limit).toBe(MAX_WINDOW / 8);
  });

  it('never closes: one acquisition at a time at worst, and opens again', () => {
    const window = new TakeWindow(100);
    for (let at = 0; at < 20; at++) window.congested(at * 1_000);
    expect(window.limit).toBe(1);
    window.answered(30_000, 30_050);
    expect(window.limit).toBe(2);
  });
});
