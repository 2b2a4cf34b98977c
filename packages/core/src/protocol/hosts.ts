/**
 * The servers of a connect string, tried in a shuffled order: every address of every host (a
 * host name is resolved again at the start of each round), the next one at once after each
 * failure, a backoff once every one of them has failed in a row.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Endpoint } from './connection';

/** A connect string's servers and chroot (`''` without one). */
export interface ParsedConnectString {
  readonly endpoints: readonly Endpoint[];
  readonly chroot: string;
}

/** Splits `host:port[,host:port...][/chroot]` (already validated by the client's options). */
export function parseConnectString(connect: string): ParsedConnectString {
  const slash = connect.indexOf('/');
  const hosts = slash === -1 ? connect : connect.slice(0, slash);
  const chroot = slash === -1 || connect.length === slash + 1 ? '' : connect.slice(slash);
  const endpoints = hosts.split(',').map((entry) => {
    const text = entry.trim();
    const colon = text.lastIndexOf(':');
    let host = text.slice(0, colon);
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    return { host, port: Number(text.slice(colon + 1)) };
  });
  return { endpoints, chroot };
}

/** Delays of the backoff between rounds, in ms: doubling from the first, capped. */
export interface BackoffOptions {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** The pause before reconnecting after a lost connection: a random time in this range. */
  readonly reconnectDelayMs?: readonly [number, number];
}

const defaultBackoff: BackoffOptions = {
  firstDelayMs: 50,
  maxDelayMs: 1_000,
  reconnectDelayMs: [10, 100],
};

/** Resolves a host name to its addresses (the `lookup` client option). */
export type HostLookup = (hostname: string) => Promise<readonly string[]> | readonly string[];

/** The system's resolver (getaddrinfo, as `net.connect` uses it): every address of the name. */
export const systemLookup: HostLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((entry) => entry.address);

/**
 * Hands out the next server address to try and how long to wait before trying it.
 *
 * The hosts are shuffled once (so a fleet of clients spreads over the ensemble). Each round
 * resolves every host name again (a Kubernetes headless service's addresses change as its pods
 * come and go) and tries every address of every host, shuffled within the host, each at once
 * after the previous one failed: a host whose first address accepts and closes (a server out of
 * its quorum) is not a dead end. Java's StaticHostProvider resolves again on each try too, and
 * kazoo tries every address getaddrinfo returns. A name that does not resolve stays in the
 * round as it is: the attempt fails with the resolver's error, which is logged. After a whole
 * round failed the next one waits, with jitter, `firstDelayMs` doubling up to `maxDelayMs`. A
 * connection that establishes a session resets that. After a lost connection the first try
 * waits a short random time: a fleet of clients does not hit the next server all at once, and a
 * client whose session another connection took over (the server drops the older one) does not
 * take it back at once.
 *
 * ## Example
 * ```ts
 * const hosts = new HostList(parseConnectString('zk-0.zk:2181,zk-1.zk:2181').endpoints);
 * const { endpoint, delayMs } = await hosts.next(); // delayMs 0: the first try is immediate
 * ```
 */
export class HostList {
  private readonly hosts: Endpoint[];
  private round: Endpoint[] = [];
  private index = 0;
  private failedInRound = 0;
  private failedRounds = 0;
  private reconnecting = false;
  private preferred: Endpoint | undefined;

  constructor(
    endpoints: readonly Endpoint[],
    private readonly backoff: BackoffOptions = defaultBackoff,
    private readonly random: () => number = Math.random,
    private readonly lookup: HostLookup = systemLookup,
  ) {
    this.hosts = this.shuffle([...endpoints]);
  }

  /** The number of hosts in the connect string (not of their addresses). */
  get size(): number {
    return this.hosts.length;
  }

  /** The server address to try next, and how long to wait first. */
  async next(): Promise<{ endpoint: Endpoint; delayMs: number }> {
    const preferred = this.preferred;
    if (preferred) {
      this.preferred = undefined;
      this.reconnecting = false;
      return { endpoint: preferred, delayMs: 0 };
    }
    let delayMs = 0;
    if (this.index >= this.round.length) {
      if (this.round.length > 0 && this.failedInRound >= this.round.length) {
        this.failedRounds += 1;
        const ceiling = Math.min(
          this.backoff.maxDelayMs,
          this.backoff.firstDelayMs * 2 ** (this.failedRounds - 1),
        );
        delayMs = Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
      }
      this.round = await this.resolveRound();
      this.index = 0;
      this.failedInRound = 0;
    }
    if (this.reconnecting) {
      this.reconnecting = false;
      const [low, high] = this.backoff.reconnectDelayMs ?? [0, 0];
      delayMs = Math.max(delayMs, Math.round(low + this.random() * (high - low)));
    }
    const endpoint = this.round[this.index]!;
    this.index += 1;
    return { endpoint, delayMs };
  }

  /** The addresses of this round but `current` (to look for a read-write server). */
  others(current: Endpoint): Endpoint[] {
    return this.round.filter(
      (endpoint) => endpoint.host !== current.host || endpoint.port !== current.port,
    );
  }

  /** The next `next()` returns `endpoint`, at once (a read-write server found). */
  preferNext(endpoint: Endpoint): void {
    this.preferred = endpoint;
  }

  /** The last server tried failed (connection refused, timed out, dropped before a session). */
  failed(): void {
    this.failedInRound += 1;
  }

  /** A session was established: the next failure starts a fresh count of rounds. */
  succeeded(): void {
    this.failedInRound = 0;
    this.failedRounds = 0;
    this.reconnecting = false;
  }

  /** An established connection was lost: the next try waits `reconnectDelayMs`. */
  lost(): void {
    this.failedInRound = 0;
    this.failedRounds = 0;
    this.reconnecting = true;
  }

  private async resolveRound(): Promise<Endpoint[]> {
    const resolved = await Promise.all(
      this.hosts.map(async (endpoint): Promise<Endpoint[]> => {
        if (isIP(endpoint.host) !== 0) return [endpoint];
        let addresses: readonly string[];
        try {
          addresses = await this.lookup(endpoint.host);
        } catch {
          return [endpoint];
        }
        if (addresses.length === 0) return [endpoint];
        return this.shuffle(
          [...new Set(addresses)].map((address) => ({
            host: address,
            port: endpoint.port,
            name: endpoint.host,
          })),
        );
      }),
    );
    return resolved.flat();
  }

  private shuffle<T>(items: T[]): T[] {
    for (let index = items.length - 1; index > 0; index--) {
      const other = Math.floor(this.random() * (index + 1));
      [items[index], items[other]] = [items[other]!, items[index]!];
    }
    return items;
  }
}
