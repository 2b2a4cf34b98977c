/**
 * ZooKeeper's four-letter-word admin commands (`ruok`, `srvr`, `mntr`, `wchc`, `cons`...) over a
 * plain TCP socket, and parsers for the answers of `mntr` and `srvr`.
 */
import { connect } from 'node:net';
import { parseHostPort } from './connect-string';

/**
 * Sends a four-letter word to a ZooKeeper server and resolves with its whole answer.
 *
 * The server must whitelist the word (`4lw.commands.whitelist=*` on the servers this package starts).
 * The answer ends when the server closes the connection.
 *
 * ## Example
 *
 * ```ts
 * console.log(await fourLetterWord('127.0.0.1:2181', 'ruok'));
 * // Output: imok
 * ```
 *
 * @param hostPort The server, `host:port`.
 * @param word Four lowercase letters, e.g. `ruok`, `srvr`, `mntr`, `wchc`, `wchs`, `cons`.
 * @param timeoutMs How long to wait for the whole answer; 5 s by default.
 * @return The answer, as sent by the server.
 */
export function fourLetterWord(hostPort: string, word: string, timeoutMs = 5_000): Promise<string> {
  if (!/^[a-z]{4}$/.test(word)) {
    return Promise.reject(new Error(`Not a four-letter word: "${word}"`));
  }
  const { host, port } = parseHostPort(hostPort);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy(new Error(`No answer to "${word}" from ${hostPort} within ${timeoutMs} ms`));
    });
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', (hadError) => {
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/**
 * Asks a server for its `mntr` metrics, numbers parsed.
 *
 * ## Example
 *
 * ```ts
 * const metrics = await mntr('127.0.0.1:2181');
 * console.log(metrics.zk_server_state, metrics.zk_watch_count);
 * // Output: standalone 0
 * ```
 *
 * @param hostPort The server, `host:port`.
 * @param timeoutMs How long to wait for the answer; 5 s by default.
 * @return Every metric by name; numeric values as numbers, others as strings.
 */
export async function mntr(
  hostPort: string,
  timeoutMs = 5_000,
): Promise<Record<string, string | number>> {
  return parseMntr(await fourLetterWord(hostPort, 'mntr', timeoutMs));
}

/**
 * Parses the answer of `mntr`: one `name<TAB>value` a line, numbers as numbers.
 *
 * ## Example
 *
 * ```ts
 * console.log(parseMntr('zk_version\t3.8.0\nzk_avg_latency\t0.5\n'));
 * // Output: { zk_version: '3.8.0', zk_avg_latency: 0.5 }
 * ```
 *
 * @param text The answer of `mntr`.
 * @return Every metric by name.
 */
export function parseMntr(text: string): Record<string, string | number> {
  const metrics: Record<string, string | number> = {};
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const value = line.slice(tab + 1).trim();
    metrics[line.slice(0, tab).trim()] = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)
      ? Number(value)
      : value;
  }
  return metrics;
}

/**
 * Reads the `Mode:` line of a `srvr` (or `stat`) answer.
 *
 * ## Example
 *
 * ```ts
 * console.log(parseServerMode('Zxid: 0x0\nMode: follower\nNode count: 5\n'));
 * // Output: follower
 * ```
 *
 * @param text The answer of `srvr` or `stat`.
 * @return `standalone`, `leader`, `follower`, `observer`..., or `undefined` when not serving.
 */
export function parseServerMode(text: string): string | undefined {
  return /^Mode: (\S+)/m.exec(text)?.[1];
}
