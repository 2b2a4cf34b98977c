/**
 * A bare ZooKeeper session over one TCP connection, spoken in jute without a client library:
 * create or resume a session, keep it alive with pings, close it. Used to expire sessions for real.
 */
import { connect, type Socket } from 'node:net';
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

  return {
    sessionId: formatSessionId(response.sessionId),
    password: response.passwd.toString('hex'),
    timeoutMs: response.timeOut,
    expired,
    response,
    closed,
    async close(timeoutMs = 10_000) {
      if (expired || socket.destroyed) return;
      stopPinging();
      await requestAndWait(socket, replies, 1, OpCode.closeSession, timeoutMs, hostPort);
      socket.end();
    },
    disconnect() {
      stopPinging();
      socket.destroy();
    },
  };
}

/**
 * Sends a header-only request and waits for the reply with the same xid.
 *
 * @param socket The session's connection.
 * @param replies Where replies are dispatched.
 * @param xid The request id.
 * @param type The op code.
 * @param timeoutMs How long to wait for the reply.
 * @param hostPort For error messages.
 * @return Resolves when the server replied without error.
 */
function requestAndWait(
  socket: Socket,
  replies: ReplyQueue,
  xid: number,
  type: number,
  timeoutMs: number,
  hostPort: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      replies.waiting.delete(xid);
      reject(new Error(`No reply to op ${type} from ${hostPort} in ${timeoutMs} ms`));
    }, timeoutMs);
    replies.waiting.set(xid, {
      resolve: (err) => {
        clearTimeout(timer);
        if (err === 0) resolve();
        else reject(new Error(`Op ${type} failed on ${hostPort} with error code ${err}`));
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    socket.write(encodeRequestHeader(xid, type));
  });
}

/** Routes packets: the first is the ConnectResponse, later ones are replies matched by xid. */
class ReplyQueue {
  onConnect: ((packet: Buffer) => void) | undefined;
  onFailure: ((error: Error) => void) | undefined;
  readonly waiting = new Map<number, { resolve(err: number): void; reject(error: Error): void }>();

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
    waiter.resolve(header.err);
  }

  fail(error: Error): void {
    this.onFailure?.(error);
    this.onConnect = undefined;
    this.onFailure = undefined;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
