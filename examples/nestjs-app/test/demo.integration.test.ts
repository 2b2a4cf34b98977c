/**
 * The example app does the three jobs as promised, on real ZooKeeper: payments one at a time per
 * order, 409 with Retry-After when busy and 503 at once when ZooKeeper is out of reach; billing
 * at most once per tick across three instances (exactly once while the leader is steady); no
 * tenant synced twice at once; an instance restarted with the same id rejoining.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('nestjs-app: the three jobs', () => {
  it('answers, bills once per tick, spreads the tenants, and takes a restarted instance back', async () => {
    process.env.TENANT_SYNC_EVERY_MS = '100'; // read when the class is defined
    const { runDemo } = await import('../src/demo');
    const { connectString } = await testZooKeeper();
    const lines: string[] = [];
    const summary = await runDemo({
      connect: connectString,
      ticks: 2,
      print: (line) => lines.push(line),
    });
    const said = `the demo said:\n${lines.join('\n')}`;

    // Job 1: one payment of an order at a time; busy: 409; ZooKeeper out of reach: 503.
    expect(summary.concurrentPayments, said).toEqual([201, 201]);
    expect(summary.paymentOverlaps).toBe(0);
    expect(summary.paymentTokensRising).toBe(true);
    expect(summary.busy).toEqual({ status: 409, retryAfter: '1', error: 'lock-timeout' });
    expect(summary.unavailable).toEqual({
      status: 503,
      retryAfter: '1',
      error: 'zookeeper-unavailable',
    });
    // Job 2: at most one run per tick across the instances, across the hand-over too; and
    // while the leader was steady, exactly one per tick its scheduler fired.
    for (const [tick, runs] of summary.billingRunsPerTick)
      expect(runs, `tick ${tick}`).toHaveLength(1);
    expect(summary.steadyLeaderFired).toBeGreaterThanOrEqual(2);
    expect(summary.steadyLeaderRuns, said).toBe(summary.steadyLeaderFired);
    expect(summary.nextLeader).not.toBe(summary.firstLeader);
    // Job 3: every tenant synced, never twice at once; the restarted instance owns some again.
    expect(summary.tenantsSynced).toBe(12);
    expect(summary.tenantOverlaps).toBe(0);
    expect(summary.restartedOwns.length).toBeGreaterThan(0);
    expect(summary.ok).toBe(true);
  });

  it('`pnpm start` (the CommonJS build, embedded ZooKeeper) exits 0 with its summary', async () => {
    expect(existsSync(main), 'dist/main.js: the test script builds it first').toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [main], {
      env: { ...process.env, DEMO_TICKS: '1', TENANT_SYNC_EVERY_MS: '100', ZK_CONNECT: '' },
      timeout: 90_000,
    });
    expect(stdout).toMatch(/embedded ZooKeeper on 127\.0\.0\.1:\d+/);
    expect(stdout).toContain('OK: every job ran as promised');
  });
});
