/**
 * The servers of a connect string, tried in a shuffled order: the next one after each failure,
 * a backoff once every one of them has failed in a row.
 */
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

/**
 * Hands out the next server to try and how long to wait before trying it. The order is shuffled
 * once (so a fleet of clients spreads over the ensemble); within a round each server is tried
 * at once after the previous one failed; after a whole round failed the next round waits, with
 * jitter, `firstDelayMs` doubling up to `maxDelayMs`. A connection that establishes a session
 * resets the rounds. After a lost connection the first try waits a short random time: a fleet
 * of clients does not hit the next server all at once, and a client whose session another
 * connection took over (the server drops the older one) does not take it back at once.
 *
 * ## Example
 * ```ts
 * const hosts = new HostList(parseConnectString('a:2181,b:2181').endpoints);
 * const { endpoint, delayMs } = hosts.next(); // delayMs 0: the first try is immediate
 * ```
 */
export class HostList {
  private readonly order: Endpoint[];
  private index = 0;
  private failuresInRow = 0;
  private reconnecting = false;

  constructor(
    endpoints: readonly Endpoint[],
    private readonly backoff: BackoffOptions = defaultBackoff,
    private readonly random: () => number = Math.random,
  ) {
    this.order = [...endpoints];
    for (let index = this.order.length - 1; index > 0; index--) {
      const other = Math.floor(this.random() * (index + 1));
      [this.order[index], this.order[other]] = [this.order[other]!, this.order[index]!];
    }
  }

  get size(): number {
    return this.order.length;
  }

  /** The server to try next, and how long to wait first. */
  next(): { endpoint: Endpoint; delayMs: number } {
    const endpoint = this.order[this.index % this.order.length]!;
    this.index = (this.index + 1) % this.order.length;
    const rounds = Math.floor(this.failuresInRow / this.order.length);
    const startsRound = this.failuresInRow > 0 && this.failuresInRow % this.order.length === 0;
    let delayMs = 0;
    if (this.reconnecting) {
      this.reconnecting = false;
      const [low, high] = this.backoff.reconnectDelayMs ?? [0, 0];
      delayMs = Math.round(low + this.random() * (high - low));
    } else if (startsRound) {
      const ceiling = Math.min(
        this.backoff.maxDelayMs,
        this.backoff.firstDelayMs * 2 ** (rounds - 1),
      );
      delayMs = Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
    }
    return { endpoint, delayMs };
  }

  /** The last server tried failed (connection refused, timed out, dropped before a session). */
  failed(): void {
    this.failuresInRow += 1;
  }

  /** A session was established: the next failure starts a fresh round. */
  succeeded(): void {
    this.failuresInRow = 0;
    this.reconnecting = false;
  }

  /** An established connection was lost: the next try waits `reconnectDelayMs`. */
  lost(): void {
    this.failuresInRow = 0;
    this.reconnecting = true;
  }
}
