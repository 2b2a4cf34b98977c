/**
 * The Jest global setup and teardown, called as Jest calls them (one process, in order): a
 * serving server named by ZKRX_TEST_CONNECT, closed at the end; a named server reused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fourLetterWord } from './four-letter-words';
import globalSetup from './jest-global-setup';
import globalTeardown from './jest-global-teardown';
import { TEST_CONNECT_ENV } from './test-zookeeper';

const before = process.env[TEST_CONNECT_ENV];
afterEach(() => {
  process.env[TEST_CONNECT_ENV] = before;
});

describe('jest global setup', () => {
  it('starts a server for the run, names it in ZKRX_TEST_CONNECT, and the teardown closes it', async () => {
    delete process.env[TEST_CONNECT_ENV];
    await globalSetup();
    const connectString = process.env[TEST_CONNECT_ENV] as string;
    expect(connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(connectString).not.toBe(before);
    expect(await fourLetterWord(connectString, 'ruok')).toBe('imok');
    await globalTeardown();
    expect(process.env[TEST_CONNECT_ENV]).toBeUndefined();
    await expect(fourLetterWord(connectString, 'ruok')).rejects.toThrow();
  });

  it('reuses the server ZKRX_TEST_CONNECT names, and leaves it running', async () => {
    await globalSetup();
    expect(process.env[TEST_CONNECT_ENV]).toBe(before);
    await globalTeardown();
    expect(await fourLetterWord(before as string, 'ruok')).toBe('imok');
  });
});
