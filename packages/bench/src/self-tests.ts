/**
 * The hidden self-test of the stall watchdog: one more session takes the lock first and never
 * lets go, so the run must end with exit 3 and a dump of the lock znodes.
 */
import { acquire } from '@zkrx/lock';
import type { RunContext } from './run-context';

/** With `--self-test-stall`, holds `path`'s mutex (or write lock) for the rest of the run. */
export async function blockForSelfTest(
  context: RunContext,
  path: string,
  take: typeof acquire = acquire,
): Promise<void> {
  if (!context.settings.selfTestStall) return;
  const blocker = await context.connect();
  await take(blocker, path);
  context.log('self-test: a session holds the lock for ever; the watchdog must fire');
}
