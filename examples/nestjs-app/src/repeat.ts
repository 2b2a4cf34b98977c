/**
 * `pnpm repeat [runs]`: runs the demo `runs` times (default 50) on one embedded ZooKeeper and
 * counts the runs in which the report job ran on two instances at once or another expectation
 * failed — how a rare overlap at the leader's shutdown is found and shown gone. One line per
 * run; exits 1 if any run failed. REPORT_EVERY_MS (default here 100) and DEMO_PHASE_MS (300)
 * set the pace.
 */
import 'reflect-metadata';
import { startZooKeeper } from '@zkrx/testing';

async function main(): Promise<number> {
  process.env.REPORT_EVERY_MS ??= '100';
  // After REPORT_EVERY_MS is set: the job's interval is read when its class is defined.
  const { runDemo } = await import('./demo.js');
  const runs = Number(process.argv[2] ?? 50);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer`);
  const phaseMs = Number(process.env.DEMO_PHASE_MS ?? 300);
  const server = await startZooKeeper();
  let failed = 0;
  let overlapping = 0;
  try {
    for (let run = 1; run <= runs; run += 1) {
      const summary = await runDemo({ connect: server.connectString, phaseMs, print: () => {} });
      if (!summary.ok) failed += 1;
      if (summary.reportOverlaps > 0) overlapping += 1;
      console.log(
        `run ${run}/${runs}: ${summary.ok ? 'ok' : 'FAILED'}, report overlaps ${summary.reportOverlaps}, ${summary.nextLeader} led ${Math.round(summary.takeoverMs)} ms after ${summary.firstLeader} began to close`,
      );
    }
  } finally {
    await server.close();
  }
  console.log(
    `${runs} runs: ${overlapping} with the report job on two instances at once, ${failed} failed`,
  );
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
