/**
 * A TCP proxy between a client and a ZooKeeper server for fault injection: drop every connection
 * at once (`cut`), stall traffic (`pause`/`resume`), refuse new connections (a partition), or
 * send the client bytes no server would (`injectGarbage`).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { parseHostPort } from './connect-string';
import { checkOptions, rule } from './options';

/**
 * What {@link TcpProxy.injectGarbage} sends the client, in place of a server's frame:
 * - `random`: random bytes whose first would-be length is negative;
 * - `oversized`: a frame announcing 2 GiB (more than any client may accept) for no request;
 * - `truncated`: a frame announcing 1,000 bytes, of which it sends 10 (what follows from the
 *   server is read as the rest of it);
 * - `unknown-xid`: a well-formed reply header for a request nobody made.
 */
export type GarbageKind = 'random' | 'oversized' | 'truncated' | 'unknown-xid';

/** Options of {@link startProxy}; a wrong one throws `InvalidOptionError` before it listens. */
export interface TcpProxyOptions {
  /** Port to listen on; a free one by default. */
  port?: number;
  /** Address to listen on; `127.0.0.1` by default. */
  host?: string;
}

/** A running proxy started by {@link startProxy}. */
export interface TcpProxy {
  /** `host:port` of the proxy, to give to the client instead of the server's. */
  readonly connectString: string;
  readonly port: number;
  /** The server the proxy forwards to, `host:port`. */
  readonly target: string;
  /** How many client connections are open through the proxy. */
  readonly connections: number;
  /** Whether traffic is stalled by `pause()`. */
  readonly paused: boolean;
  /** Bytes from the server held for the clients now (by `pause()` or `holdReplies()`). */
  readonly heldReplyBytes: number;
  /** Whether new connections are refused by `refuse(true)`. */
  readonly refusing: boolean;
  /** Destroys every current connection, both sides, at once: the client sees a connection loss. */
  cut(): void;
  /** Stops forwarding bytes both ways on existing and new connections (new ones are accepted and held). */
  pause(): void;
  /** Forwards again everything held since `pause()`. */
  resume(): void;
  /**
   * While `on`, the server's replies are held on every connection while requests still reach
   * the server: a request is applied but its caller never hears back. With `cut()` this is the
   * ConnectionLoss-after-apply case (the create happened; did it?). Off forwards what was held,
   * in one write: replies and events held together reach the client in one segment.
   */
  holdReplies(on?: boolean): void;
  /**
   * While `on`, new connections are reset as soon as accepted: the client cannot reconnect.
   * Existing connections are untouched; `cut()` then `refuse()` is a full partition.
   */
  refuse(on?: boolean): void;
  /**
   * Sends every connected client, right now and ahead of anything held, bytes no server would
   * send (a kind of {@link GarbageKind}, or the bytes given), between two chunks of the server's
   * stream. The connections stay open: what the client does about it is up to the client.
   *
   * @return How many connections got them.
   */
  injectGarbage(kind?: GarbageKind | Uint8Array): number;
  /** Destroys every connection and stops listening. Idempotent. */
  close(): Promise<void>;
}

/** One held chunk, or `null` for the end of the stream (half-close). */
type Held = Buffer | null;

/** One client connection and its upstream connection to the server. */
class Link {
  upstream: Socket | undefined;
  private readonly toServer: Held[] = [];
  private readonly toClient: Held[] = [];
  private gone = false;

  constructor(
    readonly client: Socket,
    private readonly target: { host: string; port: number },
    private readonly isPaused: () => boolean,
    private readonly onGone: (link: Link) => void,
    private readonly isHoldingReplies: () => boolean = () => false,
  ) {
    client.setNoDelay(true);
    this.wire(client, 'toServer');
    if (isPaused()) client.pause();
    else this.connectUpstream();
  }

  /** Connects to the server (deferred while paused, so a held connection costs the server nothing). */
  connectUpstream(): void {
    if (this.upstream || this.gone) return;
    const upstream = connect({ ...this.target, allowHalfOpen: true });
    this.upstream = upstream;
    upstream.setNoDelay(true);
    upstream.on('connect', () => this.flush());
    this.wire(upstream, 'toClient');
  }

  pause(): void {
    this.client.pause();
    this.upstream?.pause();
  }

  resume(): void {
    this.connectUpstream();
    this.flush();
    this.client.resume();
    this.upstream?.resume();
  }

  /** Writes bytes to the client at once, ahead of anything held. */
  inject(bytes: Buffer): void {
    if (!this.client.destroyed) this.client.write(bytes);
  }

  /** Bytes from the server not yet written to the client. */
  get heldReplyBytes(): number {
    let bytes = 0;
    for (const chunk of this.toClient) bytes += chunk?.length ?? 0;
    return bytes;
  }

  /** Drops both sides at once; the link stops counting right away. */
  destroy(): void {
    this.client.destroy();
    this.upstream?.destroy();
    if (this.gone) return;
    this.gone = true;
    this.onGone(this);
  }

  /** Bytes and end-of-stream read from `socket` go to `direction`; an error drops the link. */
  private wire(socket: Socket, direction: 'toServer' | 'toClient'): void {
    socket.on('data', (chunk: Buffer) => this.carry(chunk, direction));
    socket.on('end', () => this.carry(null, direction));
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.settle());
  }

  private carry(chunk: Held, direction: 'toServer' | 'toClient'): void {
    this[direction].push(chunk);
    this.flush();
  }

  /** Writes what is held, unless paused or the server connection is not up yet. */
  private flush(): void {
    if (this.isPaused()) return;
    const upstream = this.upstream;
    if (upstream && !upstream.connecting) drain(this.toServer, upstream);
    if (!this.isHoldingReplies()) drain(this.toClient, this.client);
  }

  /** The link is gone once both sockets are closed (or the client closed before any upstream). */
  private settle(): void {
    if (this.gone) return;
    const upstreamClosed = this.upstream ? this.upstream.closed : true;
    if (!this.client.closed || !upstreamClosed) {
      // One side closed cleanly while the other lives: half-closes travel as held `null`s;
      // a side that closed without them (destroyed) takes the other one down.
      if (this.client.closed && !this.client.readableEnded) this.upstream?.destroy();
      if (this.upstream?.closed && !this.upstream.readableEnded) this.client.destroy();
      return;
    }
    this.gone = true;
    this.onGone(this);
  }
}

/** The bytes of one garbage kind. */
export function garbageBytes(kind: GarbageKind): Buffer {
  switch (kind) {
    case 'random': {
      const bytes = Buffer.alloc(64);
      for (let index = 0; index < bytes.length; index++) {
        bytes[index] = Math.floor(Math.random() * 256);
      }
      bytes[0] = 0x80 | bytes[0]!; // a negative length: refused however the rest reads
      return bytes;
    }
    case 'oversized': {
      // The length, then a whole ReplyHeader (xid 0x41414141: no request's): a client that
      // reads on past a frame too large for it still has to refuse this one.
      const bytes = Buffer.alloc(20, 0x41);
      bytes.writeInt32BE(0x7fff_fff0, 0);
      return bytes;
    }
    case 'truncated': {
      const bytes = Buffer.alloc(14, 0x42);
      bytes.writeInt32BE(1_000, 0);
      return bytes;
    }
    case 'unknown-xid': {
      // Length 16, then a ReplyHeader: xid 0x7ffffff0, zxid 1, err 0.
      const bytes = Buffer.alloc(20);
      bytes.writeInt32BE(16, 0);
      bytes.writeInt32BE(0x7fff_fff0, 4);
      bytes.writeBigInt64BE(1n, 8);
      return bytes;
    }
  }
}

/** Writes what is held, the chunks between two ends of stream in one write (one segment). */
function drain(held: Held[], to: Socket): void {
  while (held.length > 0 && !to.destroyed) {
    if (held[0] === null) {
      held.shift();
      to.end();
      continue;
    }
    const end = held.indexOf(null);
    const chunks = held.splice(0, end === -1 ? held.length : end) as Buffer[];
    to.write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  }
}

/**
 * Starts a TCP proxy on a free loopback port that forwards to `target`.
 *
 * ## Example
 *
 * ```ts
 * const proxy = await startProxy(server.connectString);
 * const client = createClient({ connectString: proxy.connectString });
 * proxy.cut(); // the client sees a connection loss, and reconnects through the proxy
 * proxy.pause(); // requests stall until resume(): long enough, and the session expires
 * proxy.resume();
 * await proxy.close();
 * ```
 *
 * @param target The server, `host:port`.
 * @param options Where to listen.
 * @return The running proxy.
 */
export async function startProxy(target: string, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  checkOptions('startProxy', options, { port: rule.port(0), host: rule.string });
  const destination = parseHostPort(target);
  const host = options.host ?? '127.0.0.1';
  const links = new Set<Link>();
  let paused = false;
  let holdingReplies = false;
  let refusing = false;
  let closing: Promise<void> | undefined;

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    if (refusing || closing) {
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    links.add(
      new Link(
        client,
        destination,
        () => paused,
        (link) => links.delete(link),
        () => holdingReplies,
      ),
    );
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host }, () => {
      server.off('error', reject);
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('The proxy got no port'));
    });
  });

  const connectString = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return {
    connectString,
    port,
    target,
    get connections() {
      return links.size;
    },
    get paused() {
      return paused;
    },
    get heldReplyBytes() {
      let bytes = 0;
      for (const link of links) bytes += link.heldReplyBytes;
      return bytes;
    },
    get refusing() {
      return refusing;
    },
    cut() {
      for (const link of [...links]) link.destroy();
    },
    pause() {
      paused = true;
      for (const link of links) link.pause();
    },
    resume() {
      paused = false;
      for (const link of [...links]) link.resume();
    },
    refuse(on = true) {
      refusing = on;
    },
    holdReplies(on = true) {
      holdingReplies = on;
      if (!on) for (const link of [...links]) link.resume();
    },
    injectGarbage(kind = 'random') {
      const bytes = typeof kind === 'string' ? garbageBytes(kind) : Buffer.from(kind);
      for (const link of links) link.inject(bytes);
      return links.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const link of [...links]) link.destroy();
      });
      return closing;
    },
  };
}
