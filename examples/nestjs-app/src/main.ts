/**
 * `pnpm start`: runs the demo on an embedded ZooKeeper (or ZK_CONNECT) and exits 0 when every
 * expectation held. DEMO_TICKS sets how many billing ticks each phase watches.
 */
import 'reflect-metadata';
import { runDemo } from './demo';

const ticks = process.env.DEMO_TICKS ? Number(process.env.DEMO_TICKS) : undefined;

runDemo({ connect: process.env.ZK_CONNECT || undefined, ticks }).then(
  (summary) => process.exit(summary.ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
