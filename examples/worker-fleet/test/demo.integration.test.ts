import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';

const demo = fileURLToPath(new URL('../dist/demo.js', import.meta.url));

describe('worker-fleet demo (smoke)', () => {
  it('survives a leader crash and a graceful stop: every job run once, only the departed shards move', async () => {
    const { connectString } = await testZooKeeper();
    // The demo bounds each of its own waits; this bound only keeps a hung run from hanging CI,
    // and whatever the demo printed until then is in the failure.
    const stdout = await promisify(execFile)(
      process.execPath,
      [
        demo,
        '--connect',
        connectString,
        '--workers',
        '3',
        '--jobs',
        '9',
        '--session-timeout',
        '1500',
        '--issue-every',
        '60',
        '--job-ms',
        '40',
      ],
      { timeout: 100_000 },
    ).then(
      (result) => result.stdout,
      (error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      },
    );
    expect(stdout).toContain('killing the leader');
    expect(stdout).toContain('stopping the leader');
    expect(stdout).toMatch(/jobs issued 9, done 9\/9 /);
    expect(stdout).toContain('jobs that ran twice: 0');
    expect(stdout).toContain('(overlapping terms: 0)');
    expect(stdout).toContain('two owners at once: 0; tokens out of order: 0');
    expect(stdout).toMatch(
      /after the crash: (\d+) shards moved \(the minimum: \1\), \d+ stayed put, 0 of them interrupted/,
    );
    expect(stdout).toMatch(
      /after the graceful stop: (\d+) shards moved \(the minimum: \1\), \d+ stayed put, 0 of them interrupted/,
    );
    expect(stdout).toContain(
      'OK: every job ran exactly once, one leader at a time, one owner per shard, only the departed shards moved',
    );
  }, 120_000);
});
