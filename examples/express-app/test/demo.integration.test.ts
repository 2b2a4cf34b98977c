/**
 * Smoke test of the demo on the test run's ZooKeeper: with the lock no purchase oversells,
 * without it the same concurrent purchases do (a 150 ms step between read and write makes
 * the race certain), and exactly one instance takes the leader-only restock.
 */
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/demo';

describe('express-app demo (smoke)', () => {
  it('never oversells with zkLock, oversells without it', async () => {
    const { connectString } = await testZooKeeper();
    const lines: string[] = [];
    const summary = await runDemo({
      connect: connectString,
      root: uniqueRoot('express-demo'),
      purchases: 8,
      stock: 3,
      processingMs: 150,
      print: (line) => lines.push(line),
    });
    expect(summary.locked).toMatchObject({ sold: 3, soldOut: 5, failed: 0, stockLeft: 0 });
    expect(summary.locked.oversold).toBe(0);
    expect(summary.unlocked.sold).toBeGreaterThan(3);
    expect(summary.unlocked.oversold).toBeGreaterThan(0);
    expect(Object.values(summary.restockStatuses).sort()).toEqual([200, 503]);
    expect(summary.ok).toBe(true);
    expect(lines.join('\n')).toContain('OK: the lock never oversold');
  });
});
