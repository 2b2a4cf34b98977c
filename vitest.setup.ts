/**
 * Setup run before every zkrx test file: gives `vi.waitUntil` a cap a busy machine can meet, and
 * fails a test whose code handed a timer a delay Node had to correct.
 */
import { afterEach, expect, vi } from 'vitest';

/**
 * The cap of a `vi.waitUntil` that names none. Vitest's default (1 s) fails a wait whose
 * condition is merely late on two loaded cores. A wait ends as soon as its condition holds, so
 * the cap only decides how long a genuinely broken test takes to fail — never whether a slow but
 * correct run passes. Calls that pass their own `timeout` keep it.
 */
const defaultTimeoutMs = 15_000;

const waitUntil = vi.waitUntil.bind(vi);
vi.waitUntil = ((callback, options) => {
  const given = typeof options === 'number' ? { timeout: options } : (options ?? {});
  return waitUntil(callback, { ...given, timeout: given.timeout ?? defaultTimeoutMs });
}) as typeof vi.waitUntil;

/**
 * A timer's delay that is negative, NaN or past 2^31 − 1 ms is run as 1 ms, and the process
 * warns about it — on Node 24 and 26 for the first two too (`TimeoutNegativeWarning`,
 * `TimeoutNaNWarning`; Node 22 only for an overflow): an application on zkrx would print them.
 * A deadline already past is computed as a negative delay easily; none may reach `setTimeout`.
 */
const timerWarnings: Error[] = [];
process.on('warning', (warning) => {
  if (/^Timeout\w*Warning$/.test(warning.name)) timerWarnings.push(warning);
});
afterEach(() => {
  const found = timerWarnings.splice(0).map((warning) => `${warning.name}: ${warning.stack}`);
  expect(found, 'timer delays that Node had to correct').toEqual([]);
});
