/**
 * A bare ZooKeeper session over one TCP connection, spoken in jute without a client library:
 * create or resume a session, keep it alive with pings, close it. Used to expire sessions for real.
 */
import { connect } from 'node:net';
import { parseHostPort } from './connect-string';
import {
  type ConnectResponse,
  decodeConnectResponse,
  decodeReplyHeader,
  encodeConnectRequest,
  encodeRequestHeader,
  formatSessionId,
  OpCode,
  PacketSplitter,
  parsePassword,
  parseSessionId,
  Xid,
} from './jute';
import { checkOptions, rule } from './options';

/**
 * Options of {@link startRawSession}; a wrong one throws `InvalidOptionError` before it
 * connects. A {@link RawSession} is accepted as they are, to resume it (its other fields are
 * ignored).
 */
export interface RawSessionOptions {
  /** The session to resume (hex as the C client prints it, or bigint); a new session by default. */
  sessionId?: string | bigint;
  /** The resumed session's password (32 hex characters, or bytes). */
  password?: string | Uint8Array;
  /** Requested session timeout in ms (the server clamps it); 10 s by default. */
  sessionTimeoutMs?: number;
  /** Send pings every third of the negotiated timeout so the session stays alive; true by default. */
  keepAlive?: boolean;
  /** How long to wait for the TCP connection and the ConnectResponse; 5 s by default. */
  connectTimeoutMs?: number;
}

const rawSessionOptionRules = {
  sessionId: {
    expected: 'a session id (hex string, or bigint)',
    valid: (value: unknown) =>
      typeof value === 'bigint' || (typeof value === 'string' && /^(0x)?[0-9a-f]+$/i.test(value)),
  },
  password: {
    expected: 'a password (32 hex characters, or 16 bytes)',
    valid: (value: unknown) =>
      (typeof value === 'string' && /^[0-9a-f]{32}$/i.test(value)) || value instanceof Uint8Array,
  },
  sessionTimeoutMs: rule.positiveInteger,
  keepAlive: rule.boolean,
  connectTimeoutMs: rule.positiveNumber,
};
/** The fields a RawSession has besides its options' (passed back to resume it). */
const RAW_SESSION_FIELDS = ['timeoutMs', 'expired', 'response', 'closed', 'close', 'disconnect'];

/** A session held by {@link startRawSession}. */
export interface RawSession {
  /** The session id, hex (`0` when the server refused the session: `expired`). */
  readonly sessionId: string;
  /** The session password, 32 hex characters. */
  readonly password: string;
  /** The negotiated session timeout in ms (0 when `expired`). */
  readonly timeoutMs: number;
  /** True when the server answered timeOut 0: the resumed session does not exist (any more). */
  readonly expired: boolean;
  /** The raw ConnectResponse. */
  readonly response: ConnectResponse;
  /** Resolves when the TCP connection is closed, by either side. */
  readonly closed: Promise<void>;
  /** Sends closeSession and resolves on its reply (ends the session on the server). */
  close(timeoutMs?: number): Promise<void>;
  /** Drops the TCP connection without closing the session (it expires after its timeout). */
  disconnect(): void;
}

/**
 * Opens a session (or resumes one) on one server with a raw jute ConnectRequest.
 *
 * ## Example
 *
 * ```ts
 * const session = await startRawSession('127.0.0.1:2181', { sessionTimeoutMs: 4000 });
 * console.log(session.sessionId, session.timeoutMs);
 * await session.close();
 * // Output: 100000205df0000 4000
 * ```
 *
 * @param hostPort The server, `host:port`.
 * @param options The session to resume, timeouts, keep-alive; see {@link RawSessionOptions}.
 * @return The session; check `expired` when resuming.
 */
export async function startRawSession(
  hostPort: string,
  options: RawSessionOptions = {},
): Promise<RawSession> {
  checkOptions('startRawSession', options, rawSessionOptionRules, RAW_SESSION_FIELDS);
  return (await openRawSession(hostPort, options)).session;
}

/** A raw session and a way to send it requests (for this package's own conversations). */
export interface RawConversation {
  readonly session: RawSession;
  /**
   * Sends `packet` (a request encoded with `xid`, length prefix included) and resolves the
   * reply's body (its ReplyHeader first) whatever its error code; rejects when the connection
   * closes or after `timeoutMs`.
   */
  request(xid: number, packet: Buffer, timeoutMs?: number): Promise<Buffer>;
}

/**
 * Opens a session as {@link startRawSession} does (options already checked), with a way to
 * send it requests.
 *
 * @param hostPort The server, `host:port`.
 * @param options The session's options.
 * @return The session and its `request`.
 */
export async function openRawSession(
  hostPort: string,
  options: RawSessionOptions,
): Promise<RawConversation> {
  const { host, port } = parseHostPort(hostPort);
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const socket = connect({ host, port });
  socket.setNoDelay(true);
  const splitter = new PacketSplitter();
  const replies = new ReplyQueue();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', (error) => replies.fail(error));
  socket.on('close', () => replies.fail(new Error(`Connection to ${hostPort} closed`)));

  let response: ConnectResponse;
  try {
    response = await new Promise<ConnectResponse>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`No ConnectResponse from ${hostPort} in ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      replies.onConnect = (packet) => {
        clearTimeout(timer);
        try {
          resolve(decodeConnectResponse(packet));
        } catch (error) {
          reject(error);
        }
      };
      replies.onFailure = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      socket.on('data', (chunk: Buffer) => {
        try {
          for (const packet of splitter.push(chunk)) replies.deliver(packet);
        } catch (error) {
          socket.destroy(error as Error);
        }
      });
      socket.once('connect', () => {
        socket.write(
          encodeConnectRequest({
            protocolVersion: 0,
            lastZxidSeen: 0n,
            timeOut: options.sessionTimeoutMs ?? 10_000,
            sessionId: options.sessionId === undefined ? 0n : parseSessionId(options.sessionId),
            passwd:
              options.password === undefined ? Buffer.alloc(16) : parsePassword(options.password),
            readOnly: false,
          }),
        );
      });
    });
  } catch (error) {
    socket.destroy();
    throw error;
  }

  const expired = response.timeOut <= 0 || response.sessionId === 0n;
  let pinger: NodeJS.Timeout | undefined;
  if (!expired && (options.keepAlive ?? true)) {
    pinger = setInterval(
      () => socket.write(encodeRequestHeader(Xid.ping, OpCode.ping)),
      Math.max(100, Math.floor(response.timeOut / 3)),
    );
    pinger.unref();
  }
  const stopPinging = () => clearInterval(pinger);
  closed.then(stopPinging);
  if (expired) socket.end();

  const request = (xid: number, packet: Buffer, timeoutMs = 10_000) =>
    new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        replies.waiting.delete(xid);
        reject(new Error(`No reply to xid ${xid} from ${hostPort} in ${timeoutMs} ms`));
      }, timeoutMs);
      replies.waiting.set(xid, {
        resolve: (body) => {
          clearTimeout(timer);
          resolve(body);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      socket.write(packet);
    });
  const session: RawSession = {
    sessionId: formatSessionId(response.sessionId),
    password: response.passwd.toString('hex'),
    timeoutMs: response.timeOut,
    expired,
    response,
    closed,
    async close(timeoutMs = 10_000) {
      if (expired || socket.destroyed) return;
      stopPinging();
      const reply = await request(
        CLOSE_XID,
        encodeRequestHeader(CLOSE_XID, OpCode.closeSession),
        timeoutMs,
      );
      const { err } = decodeReplyHeader(reply);
      if (err !== 0) {
        throw new Error(`Op ${OpCode.closeSession} failed on ${hostPort} with error code ${err}`);
      }
      socket.end();
    },
    disconnect() {
      stopPinging();
      socket.destroy();
    },
  };
  return { session, request };
}

/** The xid of closeSession (the requests of {@link openRawSession}'s callers use others). */
export const CLOSE_XID = 0x7fff_0000;

/** Routes packets: the first is the ConnectResponse, later ones are replies matched by xid. */
class ReplyQueue {
  onConnect: ((packet: Buffer) => void) | undefined;
  onFailure: ((error: Error) => void) | undefined;
  readonly waiting = new Map<number, { resolve(body: Buffer): void; reject(error: Error): void }>();

  deliver(packet: Buffer): void {
    const onConnect = this.onConnect;
    if (onConnect) {
      this.onConnect = undefined;
      this.onFailure = undefined;
      onConnect(packet);
      return;
    }
    const header = decodeReplyHeader(packet);
    const waiter = this.waiting.get(header.xid);
    if (!waiter) return; // pings' replies, notifications
    this.waiting.delete(header.xid);
    // The packet may be a view of a chunk the splitter keeps: hand out a copy.
    waiter.resolve(Buffer.from(packet));
  }

  fail(error: Error): void {
    this.onFailure?.(error);
    this.onConnect = undefined;
    this.onFailure = undefined;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
