import { describe, expect, it } from 'vitest';
import { ZkError } from '../errors/errors';
import { exponentialBackoff } from './retry';

const lost = new ZkError('ConnectionLoss', 'lost');

describe('exponentialBackoff', () => {
  it('doubles up to the cap without jitter', () => {
    const policy = exponentialBackoff({ baseDelayMs: 10, maxDelayMs: 50, jitter: false });
    expect([1, 2, 3, 4, 5].map((retry) => policy.nextDelayMs(retry, 0, lost))).toEqual([
      10, 20, 40, 50, 50,
    ]);
  });

  it('spreads delays over [delay/2, delay] with jitter', () => {
    const policy = exponentialBackoff({ baseDelayMs: 100 });
    for (let i = 0; i < 100; i++) {
      const delay = policy.nextDelayMs(1, 0, lost) ?? -1;
      expect(delay).toBeGreaterThanOrEqual(50);
      expect(delay).toBeLessThanOrEqual(100);
    }
  });

  it('gives up after maxRetries or maxElapsedMs', () => {
    const policy = exponentialBackoff({ maxRetries: 2, maxElapsedMs: 1000 });
    expect(policy.nextDelayMs(3, 0, lost)).toBeUndefined();
    expect(policy.nextDelayMs(1, 1000, lost)).toBeUndefined();
    expect(policy.nextDelayMs(1, 990, lost)).toBeLessThanOrEqual(10);
  });
});
