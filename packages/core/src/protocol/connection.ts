/**
 * One TCP (or TLS) connection to a ZooKeeper server and its framing: 4-byte length-prefixed
 * frames in, batched writes out, a receive buffer bounded by the largest frame accepted.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { type ConnectionOptions, connect as connectTls } from 'node:tls';
import { ZkError, ZkErrorCode } from '../errors';
import { ProtocolError } from './jute';

/**
 * The smallest frame a server sends: a ReplyHeader (xid, zxid, err) is 16 bytes, and a
 * ConnectResponse at least 20.
 */
const MIN_FRAME_BYTES = 16;

/** A reply's ReplyHeader: xid, zxid, err. */
export const REPLY_HEADER_BYTES = 16;

/** What a reader tells about a frame over `maxFrameBytes`. */
export type OnOversized = (header: Buffer, length: number) => boolean | undefined;

/**
 * Splits a byte stream into frames. A frame that fits in one chunk is handed out as a view of
 * it (no copy); one that spans chunks is assembled once, in a buffer of its announced size. A
 * length below {@link MIN_FRAME_BYTES} throws ProtocolError. A frame over `maxFrameBytes` is
 * never held: its first 16 bytes (the ReplyHeader, which names the request) go to
 * `onOversized`, and the rest is read and dropped — so memory never exceeds one frame of at most
 * `maxFrameBytes` plus one chunk, and one reply too large costs only its own call.
 *
 * ## Example
 * ```ts
 * const frames = new FrameReader(1 << 20);
 * socket.on('data', (chunk) => frames.push(chunk, (frame) => handle(frame), tooLarge));
 * ```
 */
export class FrameReader {
  private readonly header = Buffer.alloc(4);
  private headerBytes = 0;
  private partial: Buffer | undefined;
  private partialBytes = 0;
  /** The frame over the limit being read and dropped. */
  private skipping:
    | { readonly header: Buffer; headerBytes: number; remaining: number; readonly length: number }
    | undefined;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes held for a frame not complete yet. */
  get buffered(): number {
    return this.headerBytes + this.partialBytes + (this.skipping?.headerBytes ?? 0);
  }

  /**
   * Adds a chunk; calls `onFrame` for each frame it completes, in order, and `onOversized` for
   * each frame over the limit once its ReplyHeader is in. Stops early when either returns
   * `false` (the connection was dropped from inside it). Without `onOversized`, a frame over
   * the limit throws ProtocolError.
   */
  push(
    chunk: Buffer,
    onFrame: (frame: Buffer) => boolean | undefined,
    onOversized?: OnOversized,
  ): void {
    let offset = 0;
    const end = chunk.length;
    while (offset < end) {
      const skipping = this.skipping;
      if (skipping) {
        if (skipping.headerBytes < REPLY_HEADER_BYTES) {
          const take = Math.min(REPLY_HEADER_BYTES - skipping.headerBytes, end - offset);
          chunk.copy(skipping.header, skipping.headerBytes, offset, offset + take);
          skipping.headerBytes += take;
          skipping.remaining -= take;
          offset += take;
          if (skipping.headerBytes < REPLY_HEADER_BYTES) return;
          if (onOversized?.(skipping.header, skipping.length) === false) return;
        }
        const drop = Math.min(skipping.remaining, end - offset);
        skipping.remaining -= drop;
        offset += drop;
        if (skipping.remaining > 0) return;
        this.skipping = undefined;
        continue;
      }
      if (this.partial) {
        const take = Math.min(this.partial.length - this.partialBytes, end - offset);
        chunk.copy(this.partial, this.partialBytes, offset, offset + take);
        this.partialBytes += take;
        offset += take;
        if (this.partialBytes < this.partial.length) return;
        const frame = this.partial;
        this.partial = undefined;
        this.partialBytes = 0;
        if (onFrame(frame) === false) return;
        continue;
      }
      let length: number;
      if (this.headerBytes === 0 && end - offset >= 4) {
        length = chunk.readInt32BE(offset);
        offset += 4;
      } else {
        const take = Math.min(4 - this.headerBytes, end - offset);
        chunk.copy(this.header, this.headerBytes, offset, offset + take);
        this.headerBytes += take;
        offset += take;
        if (this.headerBytes < 4) return;
        this.headerBytes = 0;
        length = this.header.readInt32BE(0);
      }
      if (length < MIN_FRAME_BYTES || (length > this.maxFrameBytes && !onOversized)) {
        throw new ProtocolError(
          `frame length ${length} outside [${MIN_FRAME_BYTES}, ${this.maxFrameBytes}] bytes`,
        );
      }
      if (length > this.maxFrameBytes) {
        this.skipping = {
          header: Buffer.alloc(REPLY_HEADER_BYTES),
          headerBytes: 0,
          remaining: length,
          length,
        };
        continue;
      }
      if (end - offset >= length) {
        const frame = chunk.subarray(offset, offset + length);
        offset += length;
        if (onFrame(frame) === false) return;
        continue;
      }
      this.partial = Buffer.allocUnsafe(length);
      this.partialBytes = 0;
    }
  }
}

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
 * turn of the event loop goes out in one write (writev), on the next `setImmediate`.
 */
export class Connection {
  private readonly frames: FrameReader;
  private outgoing: Buffer[] = [];
  private flushScheduled = false;
  private closed = false;
  private handlers: ConnectionHandlers | undefined;
  /**
   * performance.now() of the last complete frame received (bytes that never make a frame — a
   * truncated one — do not count as hearing from the server) and of the last write.
   */
  lastReceived = performance.now();
  lastSent = performance.now();

  constructor(
    private readonly socket: Socket,
    readonly endpoint: Endpoint,
    maxFrameBytes: number,
  ) {
    this.frames = new FrameReader(maxFrameBytes);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) =>
      this.drop(lost(`connection to ${this.describe()} failed`, error)),
    );
    socket.on('close', () => this.drop(lost(`connection to ${this.describe()} closed`)));
    socket.on('end', () => this.drop(lost(`${this.describe()} closed the connection`)));
  }

  /** The socket itself, for a four-letter word (no frames go through it then). */
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

  /** Starts delivering frames to `handlers` (and the close, once). */
  attach(handlers: ConnectionHandlers): void {
    this.handlers = handlers;
  }

  /** Queues a frame; it goes out with the others of this turn of the event loop. */
  send(frame: Buffer): void {
    if (this.closed) return;
    this.outgoing.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Writes what is queued now (one writev). */
  readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.closed || this.outgoing.length === 0) return;
    const frames = this.outgoing;
    this.outgoing = [];
    this.lastSent = performance.now();
    if (frames.length === 1) {
      this.socket.write(frames[0]!);
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

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      this.frames.push(chunk, this.deliver, this.handlers?.onOversizedFrame && this.oversized);
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
    this.outgoing = [];
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
 * handshake done); rejects with ZkError `ConnectionLoss` on failure or after `timeoutMs`.
 */
export function openConnection(
  endpoint: Endpoint,
  options: { tls: ConnectionOptions | undefined; timeoutMs: number; maxFrameBytes: number },
): { promise: Promise<Connection>; cancel(): void } {
  let socket: Socket;
  const where = formatEndpoint(endpoint);
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
  } else {
    socket = connectTcp({ host: endpoint.host, port: endpoint.port });
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
        resolve(new Connection(socket, endpoint, options.maxFrameBytes));
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
 * Asks a server whether it serves read-write: the `isro` four-letter word on a connection of its
 * own (TLS when `tls` is given), answered `rw` or `ro`. False on any failure or after `timeoutMs`.
 */
export function probeReadWrite(
  endpoint: Endpoint,
  options: { tls: ConnectionOptions | undefined; timeoutMs: number },
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const attempt = openConnection(endpoint, {
      tls: options.tls,
      timeoutMs: options.timeoutMs,
      maxFrameBytes: 64,
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
          resolve(answer.trim() === 'rw');
        });
        socket.write('isro');
      },
      () => resolve(false),
    );
  });
}
