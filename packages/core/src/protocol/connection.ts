/**
 * One TCP (or TLS) connection to a ZooKeeper server and its framing: 4-byte length-prefixed
 * frames in, batched writes out, a receive buffer bounded by the largest frame accepted; a deep
 * pipeline's replies read in batches.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { type ConnectionOptions, connect as connectTls } from 'node:tls';
import { ZkError, ZkErrorCode } from '../errors/errors';
import { ProtocolError } from '../wire/jute';
import { FrameReader } from './frames';

/**
 * Where plain TCP connections read: one buffer for the whole process (Node's `onread`), so a
 * read allocates nothing and skips the stream's machinery.
 *
 * Safety: a frame handed out of it is a view that the next read overwrites. That is sound
 * because (1) delivery is synchronous — `onFrame` runs inside the read callback and every frame
 * of a chunk is delivered before the callback returns; (2) nothing keeps a frame: every decoder
 * copies what it returns (`JuteReader.buffer()` copies, strings are decoded) and a frame split
 * across reads is assembled in FrameReader's own buffer; (3) libuv never calls a read callback
 * from inside another (JavaScript can only stop, start or write to a socket meanwhile), and
 * {@link readShared} copies the chunk if that ever changed. The test that attacks (2) reads many
 * nodes of distinct data in one batch and checks every value after later reads
 * (`connection.integration.test.ts`).
 */
const SHARED_READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
let readingShared = false;

function readShared(connection: Connection, bytes: number): void {
  const view = SHARED_READ_BUFFER.subarray(0, bytes);
  if (readingShared) {
    connection.receive(Buffer.from(view));
    return;
  }
  readingShared = true;
  try {
    connection.receive(view);
  } finally {
    readingShared = false;
  }
}

/**
 * Replies per millisecond of pause: a small read (under {@link COALESCE_BELOW_BYTES}) that
 * leaves `awaiting` requests of the connection without their replies stops reading for
 * {@link coalescePauseMs}(awaiting) — 1 ms per 64 awaiting, at most 4 ms, none below 64 — so
 * that the replies the server sends meanwhile are read together, and the requests they prompt
 * are written together.
 *
 * Why: with a deep pipeline the server answers one request at a time, and a client that reads
 * each reply as it lands makes a turn of the event loop (a wake-up, a read, a write) for one or
 * two replies — measured: 1.4–4 replies per read with 256 gets in flight; the server then also
 * wakes per request. Read in batches, the same run costs the client about 40% less CPU per get
 * (docs/benchmark-history.md, "2026-11-27, issue 18: the transport against node-zookeeper-client
 * on a loaded machine").
 *
 * What it costs, and why the server never waits for it: a pause of P ms happens only while at
 * least 64·P requests await replies, and the server answers them in order, so the session still
 * gets at least 64 replies per millisecond of pause — above what a ZooKeeper server serves one
 * connection (the best measured here: ~37 per ms); a server slower than that is still busy with
 * the awaiting requests when reading resumes. Each reply may come up to P ms later, while it
 * already queues behind ≥ 64·P others. A session that waits for fewer than 64 replies — every
 * recipe, every sequential call — is never paused.
 */
const COALESCE_PER_MS = 64;
const COALESCE_MAX_MS = 4;

/**
 * The pause after a small read that left `awaiting` requests without replies: 0 (read on) below
 * 64, then 1 ms per 64, at most 4 ms.
 *
 * ## Example
 * ```ts
 * console.log([63, 64, 200, 1_000].map(coalescePauseMs));
 * // Output: [ 0, 1, 3, 4 ]
 * ```
 */
export function coalescePauseMs(awaiting: number): number {
  return Math.min(COALESCE_MAX_MS, Math.floor(awaiting / COALESCE_PER_MS));
}

/**
 * A read this large is a batch already (the server is ahead of the client): the next read goes
 * at once. Pausing after large reads would cap a pipeline of large replies at one read buffer
 * per pause (measured: 128 gets of a 200 KB node in flight fell from ~300 MB/s to ~30 MB/s).
 */
const COALESCE_BELOW_BYTES = 16 * 1024;

/** Above this, a batch of frames is written as it is (writev) rather than copied into one. */
const COPY_BATCH_BYTES = 64 * 1024;

/** Where to connect. */
export interface Endpoint {
  /** A host name or an address. */
  readonly host: string;
  readonly port: number;
  /** The host name `host` is an address of: the name TLS checks, and messages show. */
  readonly name?: string;
}

/** What a connection tells its owner. */
export interface ConnectionHandlers {
  /** One complete frame (the bytes after the length). Throwing ProtocolError drops the connection. */
  onFrame(frame: Buffer): void;
  /**
   * A frame over `maxFrameBytes`: its ReplyHeader, and its announced length; the rest of it is
   * dropped unread. Without this handler such a frame drops the connection (MarshallingError).
   */
  onOversizedFrame?(header: Buffer, length: number): void;
  /** The connection is gone (once): why, as a ZkError (`ConnectionLoss`, `MarshallingError`). */
  onClose(reason: ZkError): void;
}

/**
 * One socket to one server. Frames are written in batches: everything `send` is given in one
 * turn of the event loop goes out in one write, on the next `setImmediate`. Frames are read from
 * the socket's `data` events, or — a socket opened with `onread` ({@link openConnection}) — given
 * to {@link receive} by its read callback.
 */
export class Connection {
  private readonly frames: FrameReader;
  private outgoing: Buffer[] = [];
  private outgoingBytes = 0;
  private flushScheduled = false;
  private preFlush: (() => void) | undefined;
  private closed = false;
  /** Why the connection closed (once closed): told to handlers attached after it. */
  private closedBy: ZkError | undefined;
  private handlers: ConnectionHandlers | undefined;
  /** The pause of a deep pipeline's reads ({@link coalescePauseMs}), while it lasts. */
  private coalesceTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * How many requests await a reply on this connection (the session's pipeline sets it): a
   * small read that leaves 64 or more pauses reading briefly ({@link coalescePauseMs}).
   */
  awaiting: () => number = () => 0;
  /**
   * performance.now() of the last complete frame received (bytes that never make a frame — a
   * truncated one — do not count as hearing from the server) and of the last write.
   */
  lastReceived = performance.now();
  lastSent = performance.now();
  /**
   * performance.now() when the frames waiting for the next write began to queue: every frame
   * {@link send} queues goes out at that write or later, so this is a time it surely was not
   * yet on its way (a request's reply proves the server heard the session after it).
   */
  queuedAt = performance.now();

  /**
   * @param ownReads The socket reads into a buffer of its own (`onread`) and its read callback
   *   calls {@link receive}: no `data` listener.
   */
  constructor(
    private readonly socket: Socket,
    readonly endpoint: Endpoint,
    maxFrameBytes: number,
    ownReads = false,
  ) {
    this.frames = new FrameReader(maxFrameBytes);
    socket.setNoDelay(true);
    if (!ownReads) socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) =>
      this.drop(lost(`connection to ${this.describe()} failed`, error)),
    );
    socket.on('close', () => this.drop(lost(`connection to ${this.describe()} closed`)));
    socket.on('end', () => this.drop(lost(`${this.describe()} closed the connection`)));
  }

  /**
   * The socket itself, for a four-letter word (no frames go through it then; open it with
   * `stream: true`, so that its bytes come as data events).
   */
  get rawSocket(): Socket {
    return this.socket;
  }

  /** `host:port` of the server. */
  describe(): string {
    return formatEndpoint(this.endpoint);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Starts delivering frames to `handlers` (and the close, once). A connection that closed
   * before they were attached — a planned move's target the server dropped while the old
   * connection drained (a leader's hand-off drops every client connection, idle ones too) —
   * tells them its close right after: without it the session would wait on it for good.
   */
  attach(handlers: ConnectionHandlers): void {
    this.handlers = handlers;
    const reason = this.closedBy;
    if (reason === undefined) return;
    queueMicrotask(() => {
      if (this.handlers === handlers) handlers.onClose(reason);
    });
  }

  /** Queues a frame; it goes out with the others of this turn of the event loop. */
  send(frame: Buffer): void {
    if (this.closed) return;
    this.outgoing.push(frame);
    this.outgoingBytes += frame.length;
    this.scheduleFlush();
  }

  /**
   * Calls `hook` right before this turn's frames are written (once; a later call replaces it):
   * what it sends goes out in the same write. The session's pipeline sends its batch of reads
   * from here.
   */
  beforeFlush(hook: () => void): void {
    if (this.closed) return;
    this.preFlush = hook;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.queuedAt = performance.now();
      setImmediate(this.flush);
    }
  }

  /**
   * Writes what is queued now, in one write: the frames copied into one buffer (small frames:
   * one socket write instead of a stream write per frame), or as they are (writev) when large.
   */
  readonly flush = (): void => {
    const hook = this.preFlush;
    this.preFlush = undefined;
    hook?.(); // its frames join this write: flushScheduled is still set, so they schedule nothing
    this.flushScheduled = false;
    if (this.closed || this.outgoing.length === 0) return;
    const frames = this.outgoing;
    const bytes = this.outgoingBytes;
    this.outgoing = [];
    this.outgoingBytes = 0;
    this.lastSent = performance.now();
    if (frames.length === 1) {
      this.socket.write(frames[0]!);
      return;
    }
    if (bytes <= COPY_BATCH_BYTES) {
      this.socket.write(Buffer.concat(frames, bytes));
      return;
    }
    this.socket.cork();
    for (const frame of frames) this.socket.write(frame);
    this.socket.uncork();
  };

  /** Drops the connection (at once: nothing queued is written). */
  destroy(reason: ZkError = lost(`connection to ${this.describe()} closed by the client`)): void {
    this.drop(reason);
  }

  /** Flushes what is queued, then closes the socket gracefully after it. */
  end(): void {
    if (this.closed) return;
    this.flush();
    this.socket.end();
  }

  /**
   * Bytes read from the socket, in order. The frames they complete are delivered before this
   * returns (a socket reading into a shared buffer relies on it).
   */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      this.frames.push(chunk, this.deliver, this.handlers?.onOversizedFrame && this.oversized);
      if (!this.closed && this.coalesceTimer === undefined && chunk.length < COALESCE_BELOW_BYTES) {
        const pauseMs = coalescePauseMs(this.awaiting());
        if (pauseMs > 0) {
          this.socket.pause();
          this.coalesceTimer = setTimeout(this.resumeReading, pauseMs);
        }
      }
    } catch (error) {
      // Never thrown out of a socket event (that would end the process): the connection goes,
      // with what went wrong as its reason.
      this.drop(
        ProtocolError.isInstance(error)
          ? new ZkError(
              ZkErrorCode.MarshallingError,
              `malformed data from ${this.describe()}: ${error.message}`,
              { cause: error },
            )
          : new ZkError(
              ZkErrorCode.SystemError,
              `handling data from ${this.describe()} failed: ${(error as Error)?.message}`,
              { cause: error },
            ),
      );
    }
  }

  private readonly resumeReading = (): void => {
    this.coalesceTimer = undefined;
    if (!this.closed) this.socket.resume();
  };

  private readonly deliver = (frame: Buffer): boolean => {
    if (this.closed) return false;
    this.lastReceived = performance.now();
    this.handlers?.onFrame(frame);
    return !this.closed;
  };

  private readonly oversized = (header: Buffer, length: number): boolean => {
    if (this.closed) return false;
    this.lastReceived = performance.now();
    this.handlers?.onOversizedFrame?.(header, length);
    return !this.closed;
  };

  private drop(reason: ZkError): void {
    if (this.closed) return;
    this.closed = true;
    this.closedBy = reason;
    this.outgoing = [];
    this.outgoingBytes = 0;
    this.preFlush = undefined;
    clearTimeout(this.coalesceTimer);
    this.coalesceTimer = undefined;
    this.socket.destroy();
    this.handlers?.onClose(reason);
  }
}

function lost(message: string, cause?: unknown): ZkError {
  return new ZkError(ZkErrorCode.ConnectionLoss, message, { cause });
}

/** `host:port` (brackets around an IPv6 address), and `name/address:port` for a resolved name. */
export function formatEndpoint(endpoint: Endpoint): string {
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return endpoint.name === undefined
    ? `${host}:${endpoint.port}`
    : `${endpoint.name}/${host}:${endpoint.port}`;
}

/**
 * Opens a socket (TLS when `tls` is given) and resolves once it is connected (and the TLS
 * handshake done); rejects with ZkError `ConnectionLoss` on failure or after `timeoutMs`. A
 * plain TCP socket reads into the process's shared buffer ({@link SHARED_READ_BUFFER}); a TLS
 * one, or one opened with `stream` (a four-letter word's), streams its chunks.
 */
export function openConnection(
  endpoint: Endpoint,
  options: {
    tls: ConnectionOptions | undefined;
    timeoutMs: number;
    maxFrameBytes: number;
    /** Stream the socket's `data` events rather than read into the shared buffer (`rawSocket`). */
    stream?: boolean;
  },
): { promise: Promise<Connection>; cancel(): void } {
  let socket: Socket;
  const where = formatEndpoint(endpoint);
  let connection: Connection | undefined;
  /** Bytes read before the connection existed (a server speaks only when spoken to: none). */
  const early: Buffer[] = [];
  if (options.tls) {
    socket = connectTls({
      ...options.tls,
      host: endpoint.host,
      port: endpoint.port,
      // The certificate is checked against the host name of the connect string, also when
      // the connection goes to one of its addresses.
      servername:
        options.tls.servername ??
        endpoint.name ??
        (isIpAddress(endpoint.host) ? undefined : endpoint.host),
    });
  } else if (options.stream) {
    socket = connectTcp({ host: endpoint.host, port: endpoint.port });
  } else {
    socket = connectTcp({
      host: endpoint.host,
      port: endpoint.port,
      onread: {
        buffer: SHARED_READ_BUFFER,
        callback: (bytes: number): boolean => {
          if (connection) readShared(connection, bytes);
          else early.push(Buffer.from(SHARED_READ_BUFFER.subarray(0, bytes)));
          return true;
        },
      },
    });
  }
  let settle: ((error?: unknown) => void) | undefined;
  const promise = new Promise<Connection>((resolve, reject) => {
    const timer = setTimeout(
      () => settle?.(new Error(`no connection within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const connectedEvent = options.tls ? 'secureConnect' : 'connect';
    const onConnected = () => settle?.();
    const onError = (error: unknown) => settle?.(error ?? new Error('closed'));
    const onClose = () => settle?.(new Error('closed before connecting'));
    settle = (error?: unknown) => {
      settle = undefined;
      clearTimeout(timer);
      socket.off(connectedEvent, onConnected);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (error === undefined) {
        connection = new Connection(
          socket,
          endpoint,
          options.maxFrameBytes,
          !options.tls && !options.stream,
        );
        for (const chunk of early.splice(0)) connection.receive(chunk);
        resolve(connection);
        return;
      }
      socket.on('error', () => {});
      socket.destroy();
      reject(
        lost(`cannot connect to ${where}: ${(error as Error).message ?? String(error)}`, error),
      );
    };
    socket.once(connectedEvent, onConnected);
    socket.once('error', onError);
    socket.once('close', onClose);
  });
  return {
    promise,
    cancel: () => settle?.(new Error('cancelled')),
  };
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/**
 * Sends a four-letter word (`isro`, `srvr`) to a server on a connection of its own (TLS when
 * `tls` is given) and resolves its whole answer — the server closes the connection after it.
 * Resolves what was read so far (maybe '') on any failure or after `timeoutMs`: never rejects.
 */
export function askServer(
  endpoint: Endpoint,
  word: string,
  options: { tls: ConnectionOptions | undefined; timeoutMs: number },
): Promise<string> {
  return new Promise<string>((resolve) => {
    const attempt = openConnection(endpoint, {
      tls: options.tls,
      timeoutMs: options.timeoutMs,
      maxFrameBytes: 64,
      // The answer is read from the socket's data events (no frames).
      stream: true,
    });
    attempt.promise.then(
      (connection) => {
        const socket = connection.rawSocket;
        let answer = '';
        const timer = setTimeout(() => socket.destroy(), options.timeoutMs);
        socket.removeAllListeners('data');
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString('latin1');
        });
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(answer);
        });
        socket.write(word);
      },
      () => resolve(''),
    );
  });
}

/**
 * Asks a server whether it serves read-write: the `isro` four-letter word, answered `rw` or
 * `ro`. False on any failure or after `timeoutMs`.
 */
export async function probeReadWrite(
  endpoint: Endpoint,
  options: { tls: ConnectionOptions | undefined; timeoutMs: number },
): Promise<boolean> {
  return (await askServer(endpoint, 'isro', options)).trim() === 'rw';
}

/**
 * The version a server reports in its `srvr` answer (`Zookeeper version: 3.8.4-…`), as
 * `[major, minor]`; undefined when the answer has none (the word is not in the server's
 * `4lw.commands.whitelist`, or no answer came).
 *
 * ## Example
 * ```ts
 * console.log(versionOf('Zookeeper version: 3.8.4-9316c2a, built on 2024-02-12 22:16 UTC\n'));
 * // Output: [ 3, 8 ]
 * ```
 */
export function versionOf(srvr: string): [number, number] | undefined {
  const match = /^Zookeeper version: (\d+)\.(\d+)\./m.exec(srvr);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}
