/**
 * `pnpm start`: runs the demo on an embedded ZooKeeper (or ZK_CONNECT) and exits 0 when every
 * expectation held. DEMO_PURCHASES, DEMO_STOCK and DEMO_PROCESSING_MS change the rounds.
 */
import { runDemo } from './demo';

function numberFrom(name: string): number | undefined {
  const value = process.env[name];
  return value ? Number(value) : undefined;
}

runDemo({
  connect: process.env.ZK_CONNECT || undefined,
  purchases: numberFrom('DEMO_PURCHASES'),
  stock: numberFrom('DEMO_STOCK'),
  processingMs: numberFrom('DEMO_PROCESSING_MS'),
}).then(
  (summary) => process.exit(summary.ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
