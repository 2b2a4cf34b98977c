/**
 * The server's CPU time, when it runs on this machine (Linux): the process listening on the
 * connect string's port, found through /proc, and its user + system time from /proc/PID/stat.
 * What a client makes the server spend per request is part of what the client costs.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The socket inodes listening on `port` in the text of /proc/net/tcp or /proc/net/tcp6.
 *
 * ## Example
 * ```ts
 * const text = readFileSync('/proc/net/tcp', 'utf8');
 * console.log(listeningInodes(text, 2181));
 * // Output: [ 123456 ]
 * ```
 *
 * @param table The file's text (a header line, then one socket a line).
 * @param port The local port.
 * @return The inodes of the sockets in state LISTEN (0A) on that port.
 */
export function listeningInodes(table: string, port: number): number[] {
  const inodes: number[] = [];
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const local = fields[1];
    if (local === undefined || fields[3] !== '0A') continue;
    const localPort = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
    const inode = Number(fields[9]);
    if (localPort === port && Number.isInteger(inode) && inode > 0) inodes.push(inode);
  }
  return inodes;
}

/**
 * User + system CPU time, in clock ticks, from the text of /proc/PID/stat (fields 14 and 15,
 * counted after the command name, which may hold spaces and parentheses).
 *
 * ## Example
 * ```ts
 * console.log(cpuTicks('42 (java) S 1 42 42 0 -1 4194560 10 0 0 0 150 25 0 0 20 0'));
 * // Output: 175
 * ```
 */
export function cpuTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): utime is field 14, stime field 15.
  const user = Number(rest[11]);
  const system = Number(rest[12]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) {
    throw new Error(`not a /proc/PID/stat line: ${JSON.stringify(stat.slice(0, 80))}`);
  }
  return user + system;
}

/** The process listening on `port` here, or undefined (not Linux, not here, not readable). */
export function findListeningProcess(port: number): number | undefined {
  let inodes: Set<number>;
  try {
    inodes = new Set(
      ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => {
        try {
          return listeningInodes(readFileSync(file, 'utf8'), port);
        } catch {
          return [];
        }
      }),
    );
  } catch {
    return undefined;
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match && inodes.has(Number(match[1]))) return Number(pid);
    }
  }
  return undefined;
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`; 100 if that fails). */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const run = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const value = Number(run.stdout?.trim());
    ticksPerSecond = Number.isInteger(value) && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

/** A process's CPU time (user + system) so far, in µs; undefined once it cannot be read. */
export function processCpuMicros(pid: number): number | undefined {
  try {
    return (cpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1e6) / clockTicks();
  } catch {
    return undefined;
  }
}
