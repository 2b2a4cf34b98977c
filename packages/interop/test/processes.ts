/**
 * Process checks for the interop suites: whether a peer still runs, and which of this test
 * process's children still run a given program.
 */
import { readdirSync, readFileSync } from 'node:fs';

function statOf(pid: number): { state: string; parent: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, parent: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Whether a process runs: it exists and, where /proc tells, is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = statOf(pid);
  return stat === undefined || (stat.state !== 'Z' && stat.state !== 'X');
}

/** Live children of this process whose command line contains `text` (Linux /proc only). */
export function childrenRunning(text: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = statOf(pid);
    if (!stat || stat.parent !== process.pid || stat.state === 'Z') continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
