/**
 * Setup run before every zkrx test file: gives `vi.waitUntil` a cap a busy machine can meet.
 * Vitest's default (1 s) fails a wait whose condition is merely late on two loaded cores.
 */
import { vi } from 'vitest';

/**
 * The cap of a `vi.waitUntil` that names none. A wait ends as soon as its condition holds, so
 * the cap only decides how long a genuinely broken test takes to fail — never whether a slow
 * but correct run passes. Calls that pass their own `timeout` keep it.
 */
const defaultTimeoutMs = 15_000;

const waitUntil = vi.waitUntil.bind(vi);
vi.waitUntil = ((callback, options) => {
  const given = typeof options === 'number' ? { timeout: options } : (options ?? {});
  return waitUntil(callback, { ...given, timeout: given.timeout ?? defaultTimeoutMs });
}) as typeof vi.waitUntil;
