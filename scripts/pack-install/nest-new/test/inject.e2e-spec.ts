// @zkrx/testing declares no dependency on vitest: testZooKeeper() imports the project's own, and
// must read what the global setup provided through it, not fall back to ZKRX_TEST_CONNECT.
import { testZooKeeper } from '@zkrx/testing';
import type {} from '@zkrx/testing/vitest-global-setup';
import { expect, inject, it } from 'vitest';

it("testZooKeeper() reads the global setup's server through the project's vitest", async () => {
  const fromEnv = process.env.ZKRX_TEST_CONNECT;
  delete process.env.ZKRX_TEST_CONNECT;
  try {
    const provided = inject('zookeeper');
    expect(provided.connectString).toMatch(/:\d+$/);
    expect(await testZooKeeper()).toEqual(provided);
  } finally {
    process.env.ZKRX_TEST_CONNECT = fromEnv;
  }
});
