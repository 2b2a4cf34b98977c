/**
 * The ensemble's dynamic configuration (`/zookeeper/config`) as a client reads it: its version,
 * and the servers a client can connect to — their client addresses as the configuration writes
 * them, the TLS ones for a TLS client.
 */

/** The node holding the ensemble's configuration (never under a chroot). */
export const CONFIG_NODE = '/zookeeper/config';

/** A `host:port` a client connects to, as a configuration or a connect string writes it. */
export interface ServerAddress {
  /** A name or an address, as written (an IPv6 address without its brackets). */
  readonly host: string;
  readonly port: number;
}

/** One `server.N=` line. */
export interface ConfiguredServer {
  /** `server.N`'s N. */
  readonly serverId: number;
  /** A voting member, or an observer. */
  readonly role: 'participant' | 'observer';
  /** The host of its (first) quorum address, as written. */
  readonly quorumHost: string;
  /** Where it takes plaintext clients; undefined when the line names no client port. */
  readonly clientAddress: ServerAddress | undefined;
  /** Where it takes TLS clients (the line's third part, ZooKeeper 3.10+: ZOOKEEPER-4276). */
  readonly secureClientAddress: ServerAddress | undefined;
}

/** A configuration: its version (the zxid that made it, hex; `0` for a static one) and servers. */
export interface EnsembleConfig {
  /** `version=` as written: hex, the zxid that made the configuration; `0` for a static one. */
  readonly version: string;
  /** The `server.N` lines, by id. */
  readonly servers: readonly ConfiguredServer[];
}

/** `host:port`, brackets around an IPv6 address. */
export function formatAddress(address: ServerAddress): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}

/** Reads `host:port` or `[v6]:port` (or a bare port, whose host is the wildcard `0.0.0.0`). */
function parseAddress(text: string): ServerAddress | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (/^\d+$/.test(trimmed)) return { host: '0.0.0.0', port: Number(trimmed) };
  const colon = trimmed.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let host = trimmed.slice(0, colon);
  const port = Number(trimmed.slice(colon + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host === '' ? undefined : { host, port };
}

/** The host of a quorum address `host:q:e[:role]` (IPv6 in brackets), the first of `a|b`. */
function quorumHostOf(quorum: string): string {
  const first = quorum.split('|')[0]!.trim();
  if (first.startsWith('[')) return first.slice(1, first.indexOf(']'));
  return first.split(':')[0]!;
}

/**
 * Reads a configuration node's text: `server.N=quorum[:role][;client][;secureClient]` lines and
 * `version=`. Lines it cannot read are skipped.
 *
 * ## Example
 * ```ts
 * const config = parseEnsembleConfig(
 *   'server.1=zk-1:2888:3888:participant;zk-1:2181\nversion=100000000',
 * );
 * console.log(config.version, config.servers[0]?.clientAddress);
 * // Output: 100000000 { host: 'zk-1', port: 2181 }
 * ```
 *
 * @param text `/zookeeper/config`'s data.
 * @return Its version and servers, by id.
 */
export function parseEnsembleConfig(text: string): EnsembleConfig {
  let version = '0';
  const servers: ConfiguredServer[] = [];
  for (const line of text.split('\n')) {
    const equals = line.indexOf('=');
    if (equals === -1) continue;
    const key = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    if (key === 'version') {
      version = value;
      continue;
    }
    const id = /^server\.(\d+)$/.exec(key)?.[1];
    if (id === undefined) continue;
    const [quorum = '', client = '', secure = ''] = value.split(';');
    servers.push({
      serverId: Number(id),
      role: /:observer\s*$/.test(quorum.split('|')[0]!) ? 'observer' : 'participant',
      quorumHost: quorumHostOf(quorum),
      clientAddress: parseAddress(client),
      secureClientAddress: parseAddress(secure),
    });
  }
  servers.sort((a, b) => a.serverId - b.serverId);
  return { version, servers };
}

/**
 * Where `server` takes clients, as written — a wildcard (`0.0.0.0`, `::`) replaced by the host
 * of its quorum address: a name stays a name — or its TLS address (`secure`).
 *
 * ## Example
 * ```ts
 * const [server] = parseEnsembleConfig('server.1=zk-1:2888:3888;0.0.0.0:2181').servers;
 * console.log(clientAddressOf(server!));
 * // Output: { host: 'zk-1', port: 2181 }
 * ```
 */
export function clientAddressOf(
  server: ConfiguredServer,
  secure = false,
): ServerAddress | undefined {
  const address = secure ? server.secureClientAddress : server.clientAddress;
  if (!address) return undefined;
  const wildcard = address.host === '0.0.0.0' || address.host === '::' || address.host === '';
  return wildcard ? { host: server.quorumHost, port: address.port } : address;
}

/** What a client can take from a configuration: the servers to follow, or why none. */
export type FollowedServers =
  | { readonly servers: readonly ServerAddress[]; readonly skipped: readonly number[] }
  | { readonly servers?: undefined; readonly reason: string };

/**
 * The servers of `config` a client connects to, in server id order: each one's client address
 * as written — a wildcard (`0.0.0.0`, `::`) replaced by the host of its quorum address, as
 * written: a name stays a name — or for a TLS client its TLS address. Servers without the
 * address wanted are skipped (their ids in `skipped`).
 *
 * A configuration before ZooKeeper 3.10 names no TLS address. A TLS client then takes the
 * client ports only when it has seen that they take TLS (`clientPortsTakeTls`: its TLS
 * connection, or its connect string, was on one of them — `client.portUnification`);
 * otherwise it follows nothing: a TLS client is never pointed at a plaintext port.
 *
 * ## Example
 * ```ts
 * const config = parseEnsembleConfig('server.1=zk-1:2888:3888;0.0.0.0:2181\nserver.2=zk-2:2888:3888');
 * console.log(followedServers(config, { tls: false }));
 * // Output: { servers: [ { host: 'zk-1', port: 2181 } ], skipped: [ 2 ] }
 * ```
 *
 * @param config The configuration read.
 * @param client Whether the client speaks TLS, and whether the client ports take TLS.
 * @return The servers, or why none.
 */
export function followedServers(
  config: EnsembleConfig,
  client: { readonly tls: boolean; readonly clientPortsTakeTls?: boolean },
): FollowedServers {
  const pick = (secure: boolean) => {
    const servers: ServerAddress[] = [];
    const skipped: number[] = [];
    for (const server of config.servers) {
      const address = clientAddressOf(server, secure);
      if (address) servers.push(address);
      else skipped.push(server.serverId);
    }
    return { servers, skipped };
  };
  if (config.servers.length === 0) return { reason: 'the configuration names no server' };
  let chosen: { servers: ServerAddress[]; skipped: number[] };
  if (!client.tls) {
    chosen = pick(false);
  } else if (config.servers.some((server) => server.secureClientAddress)) {
    chosen = pick(true);
  } else {
    if (!client.clientPortsTakeTls) {
      return {
        reason:
          'the configuration names no TLS port (ZooKeeper writes secure client ports from 3.10 on, ZOOKEEPER-4276), and the TLS connection was never on one of its client ports',
      };
    }
    chosen = pick(false);
  }
  if (chosen.servers.length === 0) {
    return { reason: 'the configuration names no client address for any server' };
  }
  return chosen;
}
