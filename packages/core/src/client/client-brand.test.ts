import { describe, expect, it } from 'vitest';
import { createClient, ZkClient } from './client';

describe('ZkClient.isInstance', () => {
  it('knows a client by its brand, not by its shape', async () => {
    // Nothing listens on port 1: the client never connects, which this test does not need.
    const client = createClient({ connect: '127.0.0.1:1', connectTimeoutMs: 100 });
    try {
      expect(ZkClient.isInstance(client)).toBe(true);
      expect(client instanceof ZkClient).toBe(true);
      const lookAlike = { session$: client.session$, promises: client.promises, state: 'x' };
      expect(ZkClient.isInstance(lookAlike)).toBe(false);
      expect(lookAlike instanceof ZkClient).toBe(false);
      expect(ZkClient.isInstance(undefined)).toBe(false);
      expect(ZkClient.isInstance('client')).toBe(false);
      // Another copy of @zkrx/core brands its clients with the same Symbol.for key.
      const fromAnotherCopy = {};
      Object.defineProperty(fromAnotherCopy, Symbol.for('zkrx.client:@zkrx/core.ZkClient'), {
        value: true,
      });
      expect(ZkClient.isInstance(fromAnotherCopy)).toBe(true);
      expect([client, lookAlike].filter(ZkClient.isInstance)).toEqual([client]);
    } finally {
      await client.close();
    }
  });
});
