/**
 * The stall fault's aim: a real `@zkrx/core` client's pings are seen in its socket writes,
 * as the worker watches for them (no hook in the client).
 */
import { createClient } from '@zkrx/core';
import { testZooKeeper } from '@zkrx/testing';
import { expect, it } from 'vitest';
import { watchPingWrites } from './ping-watch';

it("sees a real client's ping as it is written", async () => {
  const { connectString } = await testZooKeeper();
  const client = createClient({ connect: connectString, sessionTimeoutMs: 4_000 });
  let stop: (() => void) | undefined;
  try {
    await client.connected();
    // An idle connection pings after a third of the session timeout: the gate opens then.
    await new Promise<void>((resolve) => {
      stop = watchPingWrites(resolve);
    });
    expect(client.state).toBe('connected');
  } finally {
    stop?.();
    await client.close();
  }
});
