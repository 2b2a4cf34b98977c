/**
 * The servers of a connect string, tried in a shuffled order: every address of every host (a
 * host name is resolved when its turn comes, within a deadline), the next one at once after
 * each failure, a backoff once every one of them has failed in a row.
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

function hostKey(host: Endpoint): string {
  return `${host.host}:${host.port}`;
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

/** How long one name's lookup may take before its host is skipped for the round, by default. */
const DEFAULT_LOOKUP_TIMEOUT_MS = 5_000;

/**
 * Hands out the next server address to try and how long to wait before trying it.
 *
 * The hosts are shuffled once (so a fleet of clients spreads over the ensemble). A round goes
 * through the hosts in that order and tries every address of each, shuffled within the host,
 * each at once after the previous one failed: a host whose first address accepts and closes (a
 * server out of its quorum) is not a dead end. A host name is resolved when its turn comes, in
 * every round (a Kubernetes headless service's addresses change as its pods come and go) —
 * only that name, and within a deadline: a name whose lookup hangs is skipped for the round
 * (its lookup counts as a failed attempt) and never holds up the hosts after it, those given
 * as addresses above all. Java's StaticHostProvider resolves the host it is about to try too,
 * and kazoo tries every address getaddrinfo returns. A name that does not resolve is tried as
 * it is: the attempt fails with the resolver's error, which is logged. After a whole round
 * failed the next one waits, with jitter, `firstDelayMs` doubling up to `maxDelayMs`. A
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
  private hosts: Endpoint[];
  /** The next host of the round to resolve and try. */
  private hostIndex = 0;
  /** The addresses of the current host not tried yet. */
  private addresses: Endpoint[] = [];
  /** Attempts made in this round, and how many of them failed. */
  private triedInRound = 0;
  private failedInRound = 0;
  private failedRounds = 0;
  private reconnecting = false;
  private preferred: Endpoint | undefined;
  /** The addresses each host name (`name:port`) last resolved to. */
  private readonly known = new Map<string, readonly Endpoint[]>();

  /**
   * @param lookupTimeoutMs How long a name's lookup may take (read at each lookup): past it, the
   *   host is skipped for the round.
   */
  constructor(
    endpoints: readonly Endpoint[],
    private readonly backoff: BackoffOptions = defaultBackoff,
    private readonly random: () => number = Math.random,
    private readonly lookup: HostLookup = systemLookup,
    private readonly lookupTimeoutMs: () => number = () => DEFAULT_LOOKUP_TIMEOUT_MS,
  ) {
    this.hosts = this.shuffle([...endpoints]);
  }

  /** The number of hosts in the list (not of their addresses). */
  get size(): number {
    return this.hosts.length;
  }

  /** The hosts, as given (a name stays a name), in the order tried. */
  get list(): readonly Endpoint[] {
    return this.hosts;
  }

  /**
   * Whether `host` (of a host list: a name or an address, as written) is the server reached at
   * `endpoint` (an address tried): the same port, and the same name or address, or a name that
   * last resolved to that address.
   */
  names(host: Endpoint, endpoint: Endpoint): boolean {
    if (host.port !== endpoint.port) return false;
    if (host.host === endpoint.host || host.host === endpoint.name) return true;
    return (this.known.get(hostKey(host)) ?? []).some((known) => known.host === endpoint.host);
  }

  /**
   * Whether two hosts of host lists are the same server: the same text, or — one a name, the
   * other an address — the name last resolved to it.
   */
  same(a: Endpoint, b: Endpoint): boolean {
    if (a.port !== b.port) return false;
    if (a.host === b.host) return true;
    const resolved = (host: Endpoint) =>
      (this.known.get(hostKey(host)) ?? []).map((known) => known.host);
    return resolved(a).includes(b.host) || resolved(b).includes(a.host);
  }

  /**
   * Replaces the hosts (the ensemble's configuration, followed): shuffled, a new round from the
   * first. Names already resolved keep their addresses until their turn comes again.
   */
  replace(endpoints: readonly Endpoint[]): void {
    this.hosts = this.shuffle([...endpoints]);
    this.hostIndex = 0;
    this.addresses = [];
    this.triedInRound = 0;
    this.failedInRound = 0;
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
    while (this.addresses.length === 0) {
      if (this.hostIndex >= this.hosts.length) {
        if (this.triedInRound > 0 && this.failedInRound >= this.triedInRound) {
          this.failedRounds += 1;
          const ceiling = Math.min(
            this.backoff.maxDelayMs,
            this.backoff.firstDelayMs * 2 ** (this.failedRounds - 1),
          );
          delayMs = Math.max(delayMs, Math.round(ceiling / 2 + (this.random() * ceiling) / 2));
        }
        this.hostIndex = 0;
        this.triedInRound = 0;
        this.failedInRound = 0;
      }
      const host = this.hosts[this.hostIndex]!;
      this.hostIndex += 1;
      const addresses = await this.resolve(host);
      if (addresses === undefined) {
        // The name's lookup took too long: a failed attempt, and on to the next host.
        this.triedInRound += 1;
        this.failedInRound += 1;
        continue;
      }
      this.addresses = addresses;
    }
    if (this.reconnecting) {
      this.reconnecting = false;
      const [low, high] = this.backoff.reconnectDelayMs ?? [0, 0];
      delayMs = Math.max(delayMs, Math.round(low + this.random() * (high - low)));
    }
    this.triedInRound += 1;
    return { endpoint: this.addresses.shift()!, delayMs };
  }

  /** The addresses known of every host but `current` (to look for a read-write server). */
  others(current: Endpoint): Endpoint[] {
    return this.hosts
      .flatMap((host) => this.known.get(hostKey(host)) ?? [host])
      .filter((endpoint) => endpoint.host !== current.host || endpoint.port !== current.port);
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
    this.triedInRound = 0;
    this.failedRounds = 0;
    this.reconnecting = false;
  }

  /** An established connection was lost: the next try waits `reconnectDelayMs`. */
  lost(): void {
    this.failedInRound = 0;
    this.triedInRound = 0;
    this.failedRounds = 0;
    this.reconnecting = true;
  }

  /**
   * The addresses of `host`, shuffled: itself for an address or a name that does not resolve;
   * undefined when its lookup did not settle within the deadline.
   */
  addressesOf(host: Endpoint): Promise<Endpoint[] | undefined> {
    return this.resolve(host);
  }

  private async resolve(host: Endpoint): Promise<Endpoint[] | undefined> {
    if (isIP(host.host) !== 0) return [host];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.lookupTimeoutMs());
    });
    let addresses: readonly string[] | 'late';
    try {
      addresses = await Promise.race([Promise.resolve(this.lookup(host.host)), deadline]);
    } catch {
      return [host];
    } finally {
      clearTimeout(timer);
    }
    if (addresses === 'late') return undefined;
    if (addresses.length === 0) return [host];
    const resolved = this.shuffle(
      [...new Set(addresses)].map((address) => ({
        host: address,
        port: host.port,
        name: host.host,
      })),
    );
    this.known.set(hostKey(host), resolved);
    return resolved;
  }

  private shuffle<T>(items: T[]): T[] {
    for (let index = items.length - 1; index > 0; index--) {
      const other = Math.floor(this.random() * (index + 1));
      [items[index], items[other]] = [items[other]!, items[index]!];
    }
    return items;
  }
}
