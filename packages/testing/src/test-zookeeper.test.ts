/**
 * Unit tests of testZooKeeper outside the integration project: the ZKRX_TEST_CONNECT
 * fallback and the hint when there is no server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_CONNECT_ENV, testZooKeeper } from './test-zookeeper';

describe('testZooKeeper (unit project: no global setup, nothing injected)', () => {
  const saved = process.env[TEST_CONNECT_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[TEST_CONNECT_ENV];
    else process.env[TEST_CONNECT_ENV] = saved;
  });

  it('falls back to ZKRX_TEST_CONNECT', async () => {
    process.env[TEST_CONNECT_ENV] = '10.0.0.1:2181';
    expect(await testZooKeeper()).toEqual({ connectString: '10.0.0.1:2181' });
  });

  it('says how to get a server when there is none', async () => {
    delete process.env[TEST_CONNECT_ENV];
    await expect(testZooKeeper()).rejects.toThrow(/vitest-global-setup.*ZKRX_TEST_CONNECT/s);
  });
});
