/**
 * Makes sure no ZooKeeper outlives the Node process that started it: an 'exit' hook for normal
 * exits and, per server, a detached shell watchdog for a process that is killed outright.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

/** One tracked server process; `release()` when it is stopped on purpose. */
export interface ReaperTicket {
  /** Stops watching (kills the watchdog) without touching the server or its directory. */
  release(): void;
}

interface Tracked {
  javaPid: number;
  dir: string;
  watchdog: ChildProcess | undefined;
}

const tracked = new Set<Tracked>();
let hookInstalled = false;

/**
 * The watchdog polls once a second. While the owner (`$1`) lives it only checks the server (`$2`):
 * once the server is gone (stopped normally, or crashed) there is nothing left to guard, so it exits.
 * If the owner dies first, it SIGKILLs the server and removes the directory (`$3`).
 */
const WATCHDOG_SCRIPT = [
  'while kill -0 "$1" 2>/dev/null; do',
  '  kill -0 "$2" 2>/dev/null || exit 0',
  '  sleep 1',
  'done',
  'kill -9 "$2" 2>/dev/null',
  'rm -rf "$3"',
].join('\n');

/**
 * Registers a server process so it is SIGKILLed and `dir` removed if this process exits or dies.
 *
 * ## Example
 *
 * ```ts
 * const ticket = trackServerProcess(child.pid, dir);
 * // ... later, when stopping the server on purpose:
 * ticket.release();
 * ```
 *
 * @param javaPid The server's process id.
 * @param dir The directory to delete with it (the server's, or the whole ensemble's).
 * @return A ticket to release when the server is stopped normally.
 */
export function trackServerProcess(javaPid: number, dir: string): ReaperTicket {
  installExitHook();
  const entry: Tracked = { javaPid, dir, watchdog: spawnWatchdog(javaPid, dir) };
  tracked.add(entry);
  return {
    release() {
      if (!tracked.delete(entry)) return;
      killWatchdog(entry.watchdog);
    },
  };
}

/** How many server processes this process currently guards (for tests). */
export function trackedServerCount(): number {
  return tracked.size;
}

function spawnWatchdog(javaPid: number, dir: string): ChildProcess | undefined {
  try {
    const watchdog = spawn(
      'sh',
      ['-c', WATCHDOG_SCRIPT, 'zkrx-watchdog', String(process.pid), String(javaPid), dir],
      { detached: true, stdio: 'ignore' },
    );
    watchdog.on('error', () => {}); // no `sh`: the 'exit' hook still covers normal exits
    watchdog.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

function killWatchdog(watchdog: ChildProcess | undefined): void {
  if (!watchdog?.pid || watchdog.exitCode !== null || watchdog.signalCode !== null) return;
  try {
    // Detached: the watchdog leads its own process group, which also holds its `sleep`.
    process.kill(-watchdog.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', () => {
    for (const entry of tracked) {
      try {
        process.kill(entry.javaPid, 'SIGKILL');
      } catch {
        // already gone
      }
      killWatchdog(entry.watchdog);
    }
    for (const entry of tracked) {
      try {
        rmSync(entry.dir, { recursive: true, force: true });
      } catch {
        // best effort at exit
      }
    }
    tracked.clear();
  });
}
