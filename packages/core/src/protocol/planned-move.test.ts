/** Unit tests of a planned move's bound: the session's own clock and the read timeout. */
import { describe, expect, it } from 'vitest';
import { SESSION_MARGIN } from './heartbeat';
import { MIN_MOVE_MS, moveBoundMs } from './planned-move';

describe('moveBoundMs', () => {
  it('is the read timeout (2T/3) for a session just heard', () => {
    expect(moveBoundMs({ now: 1_000, heardAt: 1_000, timeoutMs: 6_000 })).toBe(4_000);
  });

  it('ends (1 − SESSION_MARGIN)·T after the server last heard the session', () => {
    const bound = moveBoundMs({ now: 3_000, heardAt: 0, timeoutMs: 6_000 });
    expect(bound).toBe(6_000 * (1 - SESSION_MARGIN) - 3_000);
    // The move's end leaves the margin before the server could expire the session.
    expect(6_000 - (3_000 + bound)).toBe(6_000 * SESSION_MARGIN);
  });

  it('leaves no move after a stall past that point', () => {
    expect(moveBoundMs({ now: 5_500, heardAt: 0, timeoutMs: 6_000 })).toBeLessThan(MIN_MOVE_MS);
  });
});
