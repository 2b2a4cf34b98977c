/**
 * Test helper (not published): whether a process id still runs, for assertions that a server
 * process is gone. A zombie (dead, not yet reaped by its parent or init) counts as gone.
 */
import { readFileSync } from 'node:fs';

/**
 * Whether a process runs: it exists (signal 0) and, where /proc tells, is not a zombie.
 * Orphans killed after their Node owner died are reaped by PID 1, which in some containers
 * takes a second or more; until then they are zombies that `kill -0` still finds.
 *
 * @param pid The process id.
 * @return True while it runs.
 */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}
