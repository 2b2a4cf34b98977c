import { describe, expect, it } from 'vitest';
import { handshakeWaitMs } from './session';

describe('handshakeWaitMs', () => {
  it('waits a quarter of the session timeout first, doubles after each wait that ran out, up to the attempt', () => {
    expect([0, 1, 2, 3, 40].map((runOut) => handshakeWaitMs(10_000, 10_000, runOut))).toEqual([
      2_500, 5_000, 10_000, 10_000, 10_000,
    ]);
    // Three hosts: an attempt is a third of the session timeout (as Java's ClientCnxn).
    expect([0, 1, 2].map((runOut) => handshakeWaitMs(9_000, 3_000, runOut))).toEqual([
      2_250, 3_000, 3_000,
    ]);
  });

  it('never waits less than a second, nor longer than the attempt', () => {
    expect(handshakeWaitMs(2_000, 1_000, 0)).toBe(1_000);
    expect(handshakeWaitMs(400, 1_000, 0)).toBe(1_000);
    expect(handshakeWaitMs(40_000, 4_000, 0)).toBe(4_000);
  });
});
