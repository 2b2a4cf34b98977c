/**
 * `pnpm start`: runs the demo on an embedded ZooKeeper (or ZK_CONNECT) and exits 0 when every
 * expectation held. DEMO_PHASE_MS and REPORT_EVERY_MS shorten it.
 */
import 'reflect-metadata';
import { runDemo } from './demo';

const phaseMs = process.env.DEMO_PHASE_MS ? Number(process.env.DEMO_PHASE_MS) : undefined;

runDemo({ connect: process.env.ZK_CONNECT || undefined, phaseMs }).then(
  (summary) => process.exit(summary.ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
