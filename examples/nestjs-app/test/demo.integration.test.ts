import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('nestjs-app demo (smoke)', () => {
  it('runs the report job on one instance at a time and moves it when the leader closes', async () => {
    // The job's interval is a decorator argument, read when the class is defined.
    process.env.REPORT_EVERY_MS = '100';
    const { runDemo } = await import('../src/demo');
    const { connectString } = await testZooKeeper();
    const lines: string[] = [];
    const summary = await runDemo({
      connect: connectString,
      phaseMs: 700,
      minReports: 3,
      print: (line) => lines.push(line),
    });

    expect(summary.reportsBefore[summary.firstLeader]).toBeGreaterThanOrEqual(3);
    expect(summary.reportsBefore[summary.nextLeader]).toBe(0);
    expect(summary.reportsAfter[summary.firstLeader]).toBe(0);
    expect(summary.reportsAfter[summary.nextLeader]).toBeGreaterThanOrEqual(3);
    expect(
      summary.reportOverlaps,
      `overlapping report runs; the demo said:\n${lines.join('\n')}`,
    ).toBe(0);
    // The next leader was elected after the leader began to close, not before (how soon is the
    // machine's pace, printed by the demo, not asserted).
    expect(summary.takeoverMs).toBeGreaterThanOrEqual(0);
    expect(summary).toMatchObject({
      restocks: 6,
      restockOverlaps: 0,
      tokensRising: true,
      ok: true,
    });
    expect(summary.health).toEqual({ A: 'up (connected)', B: 'up (connected)' });
    expect(lines.at(-1)).toMatch(/^OK: /);
  });

  it('`pnpm start` (the CommonJS build, embedded ZooKeeper) exits 0 with its summary', async () => {
    expect(existsSync(main), 'dist/main.js: the test script builds it first').toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [main], {
      env: { ...process.env, REPORT_EVERY_MS: '100', DEMO_PHASE_MS: '600', ZK_CONNECT: '' },
      timeout: 90_000,
    });
    expect(stdout).toMatch(/embedded ZooKeeper on 127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/report runs on two instances at once: 0/);
    expect(stdout).toMatch(/restocks: 6, overlapping: 0, fencing tokens rising: true/);
    expect(stdout).toContain(
      'OK: the job ran on one instance at a time and moved when its leader closed',
    );
  });
});
