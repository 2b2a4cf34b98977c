/**
 * The heartbeat's rules as pure functions of the clocks: a stall is credited against the
 * server's silence only where it came after the last frame read, and nothing keeps a
 * connection once the server may soon expire the session (issue 26, item 1).
 */
import { describe, expect, it } from 'vitest';
import { judgeSilence, SESSION_MARGIN, StallCredit } from './heartbeat';

const T = 6_000;
const READ_TIMEOUT = (T * 2) / 3;

describe('StallCredit', () => {
  it('does not credit a stall that ended with a frame read (the stall came before it)', () => {
    // A ping at 0; the process stalls 3.3 s; the ping's reply, waiting in the socket, is read
    // as the stall ends (5.3 s); the tick due at 2 s ran at 5.3 s, its check after the read.
    const stalls = new StallCredit(0);
    expect(stalls.after(5_300, 2_000, 5_300)).toBe(0);
    // The server then goes silent: only the read timeout after 5.3 s counts.
    expect(
      judgeSilence({
        now: 5_300 + READ_TIMEOUT,
        lastReceived: 5_300,
        stalledMs: 0,
        heardAt: 5_300,
        sessionTimeoutMs: T,
      }).lost,
    ).toBeDefined();
  });

  it('credits a stall that covered the silence after the last frame', () => {
    const stalls = new StallCredit(1_000);
    expect(stalls.after(1_000, 3_000, 6_000)).toBe(3_000);
    // Later ticks add up while no frame comes; a frame clears it all.
    expect(stalls.after(1_000, 6_500, 6_600)).toBe(3_100);
    expect(stalls.after(6_700, 7_000, 7_400)).toBe(400 - 0 /* the part after 7 000 */);
    expect(stalls.after(7_500, 8_000, 8_010)).toBe(0);
  });

  it('credits only the part of a stall after a frame read inside it', () => {
    // The tick was due at 2 s; a frame was read at 3 s (the loop ran then); the tick ran at 5 s.
    const stalls = new StallCredit(0);
    expect(stalls.after(3_000, 2_000, 5_000)).toBe(2_000);
  });

  it('ignores timers that run a little late', () => {
    const stalls = new StallCredit(0);
    expect(stalls.after(0, 2_000, 2_040)).toBe(0);
  });
});

describe('judgeSilence', () => {
  it('drops after the read timeout of silence not counting the stalls after the last frame', () => {
    const at = (now: number, stalledMs: number) =>
      judgeSilence({ now, lastReceived: 0, stalledMs, heardAt: undefined, sessionTimeoutMs: T });
    expect(at(READ_TIMEOUT - 1, 0).lost).toBeUndefined();
    expect(at(READ_TIMEOUT - 1, 0).checkInMs).toBe(1);
    expect(at(READ_TIMEOUT, 0).lost?.('s:1')).toBe('no answer from s:1 for 4000 ms');
    expect(at(READ_TIMEOUT + 1_000, 1_000).lost).toBeDefined();
    expect(at(READ_TIMEOUT + 999, 1_000).lost).toBeUndefined();
  });

  it('never keeps a connection past the session timeout less the margin after the server last heard it, whatever the stalls', () => {
    const limit = T * (1 - SESSION_MARGIN);
    // A stall longer than the session timeout, nothing read: the credit covers the silence,
    // the session's clock does not.
    const verdict = judgeSilence({
      now: 8_000,
      lastReceived: 0,
      stalledMs: 7_900,
      heardAt: 0,
      sessionTimeoutMs: T,
    });
    expect(verdict.lost?.('s:1')).toMatch(/answered nothing sent in the last 8000 ms/);
    // Frames keep coming (notifications) while no request is answered.
    expect(
      judgeSilence({
        now: limit,
        lastReceived: limit - 10,
        stalledMs: 0,
        heardAt: 0,
        sessionTimeoutMs: T,
      }).lost,
    ).toBeDefined();
    expect(
      judgeSilence({
        now: limit - 1,
        lastReceived: limit - 10,
        stalledMs: 0,
        heardAt: 0,
        sessionTimeoutMs: T,
      }).checkInMs,
    ).toBe(1);
    // On a read-only server (no heardAt) only the read timeout counts.
    expect(
      judgeSilence({
        now: limit,
        lastReceived: limit - 10,
        stalledMs: 0,
        heardAt: undefined,
        sessionTimeoutMs: T,
      }).lost,
    ).toBeUndefined();
  });
});
