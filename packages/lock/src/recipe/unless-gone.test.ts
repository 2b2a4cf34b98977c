import { ZkError, ZkErrorCode } from '@zkrx/core';
import { describe, expect, it } from 'vitest';
import { unlessGone } from './unless-gone';

describe('unlessGone', () => {
  it('reads a missing node as undefined and keeps every other failure', async () => {
    await expect(unlessGone(Promise.resolve('data'))).resolves.toBe('data');
    await expect(
      unlessGone(Promise.reject(new ZkError(ZkErrorCode.NoNode, 'gone'))),
    ).resolves.toBeUndefined();
    const denied = new ZkError(ZkErrorCode.NoAuth, 'denied');
    await expect(unlessGone(Promise.reject(denied))).rejects.toBe(denied);
  });
});
