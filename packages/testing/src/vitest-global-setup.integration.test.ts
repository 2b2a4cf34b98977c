/**
 * Integration tests of the vitest global setup: the provided server serves, and
 * testZooKeeper() and ZKRX_TEST_CONNECT agree with inject('zookeeper').
 */
import { describe, expect, inject, it } from 'vitest';
import { fourLetterWord } from './four-letter-words';
import { TEST_CONNECT_ENV, testZooKeeper } from './test-zookeeper';
import type {} from './vitest-global-setup';

describe('vitest global setup', () => {
  it("provides one serving ZooKeeper as inject('zookeeper')", async () => {
    const provided = inject('zookeeper');
    expect(provided.connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await fourLetterWord(provided.connectString, 'ruok')).toBe('imok');
    expect(await fourLetterWord(provided.connectString, 'srvr')).toMatch(/^Mode: standalone$/m);
  });

  it('testZooKeeper() returns the provided server, and child processes get it from the env', async () => {
    const provided = inject('zookeeper');
    expect(await testZooKeeper()).toEqual({ connectString: provided.connectString });
    expect(process.env[TEST_CONNECT_ENV]).toBe(provided.connectString);
  });
});
