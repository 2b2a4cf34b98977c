/**
 * Parsing of ZooKeeper connect strings (`host:port,host:port/chroot`) and single `host:port`s,
 * IPv6 in brackets included. Pure functions.
 */

/** One server address of a connect string. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * Splits `host:port` (or `[v6]:port`) into its parts.
 *
 * ## Example
 *
 * ```ts
 * console.log(parseHostPort('[::1]:2181'));
 * // Output: { host: '::1', port: 2181 }
 * ```
 *
 * @param hostPort The address; a missing port means 2181.
 * @return The host (without brackets) and the port.
 */
export function parseHostPort(hostPort: string): HostPort {
  const text = hostPort.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: toPort(bracketed[2], hostPort) };
  const colon = text.lastIndexOf(':');
  if (colon === -1) return { host: requireHost(text, hostPort), port: 2181 };
  if (text.indexOf(':') !== colon) {
    throw new Error(`Invalid host:port "${hostPort}": put IPv6 addresses in brackets ([::1]:2181)`);
  }
  return {
    host: requireHost(text.slice(0, colon), hostPort),
    port: toPort(text.slice(colon + 1), hostPort),
  };
}

/**
 * Lists the servers of a connect string, in order, dropping its chroot suffix.
 *
 * ## Example
 *
 * ```ts
 * console.log(parseConnectString('a:1,b:2/app'));
 * // Output: [ { host: 'a', port: 1 }, { host: 'b', port: 2 } ]
 * ```
 *
 * @param connectString Comma-separated `host:port`s, optionally followed by `/chroot`.
 * @return One entry per server.
 */
export function parseConnectString(connectString: string): HostPort[] {
  const slash = connectString.indexOf('/');
  const hosts = slash === -1 ? connectString : connectString.slice(0, slash);
  const servers = hosts
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map(parseHostPort);
  if (servers.length === 0) throw new Error(`Invalid connect string "${connectString}": no server`);
  return servers;
}

/**
 * Formats a host and port back into `host:port`, bracketing IPv6 hosts.
 *
 * ## Example
 *
 * ```ts
 * console.log(formatHostPort({ host: '::1', port: 2181 }));
 * // Output: [::1]:2181
 * ```
 *
 * @param address The host and port.
 * @return The `host:port` text.
 */
export function formatHostPort(address: HostPort): string {
  return address.host.includes(':')
    ? `[${address.host}]:${address.port}`
    : `${address.host}:${address.port}`;
}

function toPort(text: string | undefined, original: string): number {
  if (text === undefined || text === '') return 2181;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) {
    throw new Error(`Invalid port in "${original}"`);
  }
  return port;
}

function requireHost(host: string, original: string): string {
  if (host.length === 0) throw new Error(`Invalid host:port "${original}": no host`);
  return host;
}
