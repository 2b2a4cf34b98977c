/**
 * Numbers the browser tests measure (event-to-render latencies), printed, and written to
 * docs/measurements.json with ZKRX_CONSOLE_DOCS=1 (as the screenshots are), so the README
 * quotes what a run measured.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../docs/measurements.json', import.meta.url);

export function recordMeasurement(name: string, value: number, unit: string): void {
  console.log(`[measurement] ${name}: ${value} ${unit}`);
  if (process.env.ZKRX_CONSOLE_DOCS !== '1') return;
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(readFileSync(file, 'utf8'));
  } catch {}
  all[name] = { value, unit, at: new Date().toISOString() };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}
