/**
 * The few records of ZooKeeper's client wire protocol (jute) that session handling needs:
 * encoders, decoders and a frame splitter. Pure functions over Buffers, 64-bit ids as BigInt.
 *
 * Where the facts come from: the record layouts are those of `zookeeper-jute/src/main/resources/
 * zookeeper.jute` (module `org.apache.zookeeper.proto`: ConnectRequest, ConnectResponse,
 * RequestHeader, ReplyHeader) in the Apache ZooKeeper source; jute's binary encoding (big-endian
 * `int` = 4 bytes, `long` = 8, `boolean` = 1 byte, `buffer` = int length then bytes, -1 for null) is
 * Java's DataOutput as used by `BinaryOutputArchive`; every packet on the socket is prefixed by its
 * int length; op codes (`closeSession` = -11, `ping` = 11) are `ZooDefs.OpCode`, and the reserved
 * xids (`-2` ping, `-1` watch notification) are those the Java client (`ClientCnxn`) uses.
 */

/** `ZooDefs.OpCode` values used here. */
export const OpCode = {
  /** Ends a session on the server, like `ZooKeeper.close()`. */
  closeSession: -11,
  /** Reads a node's data (the configuration node's, here). */
  getData: 4,
  /** Keeps a session alive; its reply has xid -2. */
  ping: 11,
  /** Changes the ensemble's membership (dynamic reconfiguration, 3.5+). */
  reconfig: 16,
  /** Adds credentials to the session (`addauth`); its reply has xid -4. */
  auth: 100,
} as const;

/** Reserved xids of the client protocol. */
export const Xid = {
  ping: -2,
  notification: -1,
  auth: -4,
} as const;

/** `ConnectRequest` of zookeeper.jute: the first packet of every client connection. */
export interface ConnectRequest {
  protocolVersion: number;
  lastZxidSeen: bigint;
  /** Requested session timeout in ms; the server clamps it to its min/max. */
  timeOut: number;
  /** 0 for a new session, or the id of the session to resume. */
  sessionId: bigint;
  /** 16 bytes for a resumed session, empty (or 16 zero bytes) for a new one. */
  passwd: Uint8Array;
  readOnly: boolean;
}

/** `ConnectResponse` of zookeeper.jute: `timeOut` 0 means the session is invalid (expired). */
export interface ConnectResponse {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer;
  /** Absent from servers older than 3.4. */
  readOnly: boolean;
}

/** `ReplyHeader` of zookeeper.jute: the start of every reply; `err` is a KeeperException code. */
export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}

/**
 * Encodes a `ConnectRequest` as one length-prefixed packet.
 *
 * ## Example
 *
 * ```ts
 * const packet = encodeConnectRequest({ protocolVersion: 0, lastZxidSeen: 0n, timeOut: 4000,
 *   sessionId: 0n, passwd: Buffer.alloc(16), readOnly: false });
 * console.log(packet.length);
 * // Output: 49
 * ```
 *
 * @param request The record.
 * @return The packet, length prefix included.
 */
export function encodeConnectRequest(request: ConnectRequest): Buffer {
  const body = Buffer.alloc(4 + 8 + 4 + 8 + 4 + request.passwd.length + 1);
  let offset = body.writeInt32BE(request.protocolVersion, 0);
  offset = body.writeBigInt64BE(request.lastZxidSeen, offset);
  offset = body.writeInt32BE(request.timeOut, offset);
  offset = body.writeBigInt64BE(request.sessionId, offset);
  offset = body.writeInt32BE(request.passwd.length, offset);
  body.set(request.passwd, offset);
  offset += request.passwd.length;
  body.writeUInt8(request.readOnly ? 1 : 0, offset);
  return frame(body);
}

/**
 * Decodes the body of a `ConnectResponse` (the packet without its length prefix).
 *
 * ## Example
 *
 * ```ts
 * const response = decodeConnectResponse(body);
 * console.log(response.timeOut === 0 ? 'expired' : response.sessionId.toString(16));
 * // Output: 100000205df0000
 * ```
 *
 * @param body The packet's bytes after the length.
 * @return The record.
 */
export function decodeConnectResponse(body: Buffer): ConnectResponse {
  const reader = new Reader(body, 'ConnectResponse');
  const protocolVersion = reader.int();
  const timeOut = reader.int();
  const sessionId = reader.long();
  const passwd = reader.buffer();
  const readOnly = reader.remaining() > 0 ? reader.boolean() : false;
  return { protocolVersion, timeOut, sessionId, passwd, readOnly };
}

/**
 * Encodes a request made of a `RequestHeader` only (closeSession, ping), as one packet.
 *
 * ## Example
 *
 * ```ts
 * console.log(encodeRequestHeader(1, OpCode.closeSession).toString('hex'));
 * // Output: 0000000800000001fffffff5
 * ```
 *
 * @param xid The request's id, echoed in its reply.
 * @param type The op code.
 * @return The packet, length prefix included.
 */
export function encodeRequestHeader(xid: number, type: number): Buffer {
  return frame(header(xid, type));
}

/**
 * Decodes the `ReplyHeader` at the start of a reply packet's body.
 *
 * ## Example
 *
 * ```ts
 * console.log(decodeReplyHeader(body));
 * // Output: { xid: 1, zxid: 5n, err: 0 }
 * ```
 *
 * @param body The packet's bytes after the length.
 * @return The header (the reply's record, if any, follows it).
 */
export function decodeReplyHeader(body: Buffer): ReplyHeader {
  const reader = new Reader(body, 'ReplyHeader');
  return { xid: reader.int(), zxid: reader.long(), err: reader.int() };
}

/**
 * Accumulates socket chunks and hands out whole packets (bodies without their length prefix).
 *
 * ## Example
 *
 * ```ts
 * const splitter = new PacketSplitter();
 * socket.on('data', (chunk) => { for (const body of splitter.push(chunk)) handle(body); });
 * ```
 */
export class PacketSplitter {
  private pending: Buffer = Buffer.alloc(0);

  /**
   * @param maxPacketBytes Largest packet accepted (jute.maxbuffer is 1 MiB by default).
   */
  constructor(private readonly maxPacketBytes = 4 * 1024 * 1024) {}

  /**
   * Adds bytes read from the socket.
   *
   * @param chunk The bytes.
   * @return Every packet completed by them, in order.
   */
  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const packets: Buffer[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readInt32BE(0);
      if (length < 0 || length > this.maxPacketBytes) {
        throw new Error(`Invalid packet length ${length}`);
      }
      if (this.pending.length < 4 + length) break;
      packets.push(this.pending.subarray(4, 4 + length));
      this.pending = this.pending.subarray(4 + length);
    }
    return packets;
  }
}

/**
 * Parses a session id as the C client prints it (`100000205df0000`, hex, `0x` optional).
 *
 * @param sessionId The id as hex text, or already a bigint.
 * @return The id.
 */
export function parseSessionId(sessionId: string | bigint): bigint {
  if (typeof sessionId === 'bigint') return sessionId;
  const hex = sessionId.trim().replace(/^0x/i, '');
  if (!/^[0-9a-f]{1,16}$/i.test(hex)) throw new Error(`Invalid session id "${sessionId}"`);
  return BigInt.asIntN(64, BigInt(`0x${hex}`));
}

/**
 * Formats a session id the way the C client prints it: lowercase hex, no `0x`, no padding.
 *
 * @param sessionId The id (jute's signed 64-bit value).
 * @return The hex text.
 */
export function formatSessionId(sessionId: bigint): string {
  return BigInt.asUintN(64, sessionId).toString(16);
}

/**
 * Parses a session password given as hex (32 hex characters = 16 bytes).
 *
 * @param password Hex text, or already bytes.
 * @return The bytes.
 */
export function parsePassword(password: string | Uint8Array): Buffer {
  if (typeof password !== 'string') return Buffer.from(password);
  if (!/^([0-9a-f]{2})*$/i.test(password)) throw new Error('Invalid session password: not hex');
  return Buffer.from(password, 'hex');
}

/**
 * Encodes an `AuthPacket` (`addauth scheme credentials`) as one packet, with the auth xid.
 *
 * ## Example
 *
 * ```ts
 * socket.write(encodeAuthPacket('digest', 'super:secret'));
 * ```
 *
 * @param scheme The authentication scheme (`digest`).
 * @param credentials Its credentials (`user:password` for digest).
 * @return The packet, length prefix included.
 */
export function encodeAuthPacket(scheme: string, credentials: string): Buffer {
  return frame(
    Buffer.concat([header(Xid.auth, OpCode.auth), int(0), ustring(scheme), ustring(credentials)]),
  );
}

/**
 * Encodes a `GetDataRequest` (path, watch) as one packet.
 *
 * @param xid The request's id, echoed in its reply.
 * @param path The node.
 * @return The packet, length prefix included.
 */
export function encodeGetDataRequest(xid: number, path: string): Buffer {
  return frame(Buffer.concat([header(xid, OpCode.getData), ustring(path), Buffer.from([0])]));
}

/** The change a `ReconfigRequest` asks for: servers joining (`server.N=...` lines) and leaving (ids). */
export interface ReconfigChange {
  readonly joining?: readonly string[];
  readonly leaving?: readonly number[];
}

/**
 * Encodes an incremental `ReconfigRequest` (joining, leaving, no new members, any current
 * version) as one packet.
 *
 * @param xid The request's id, echoed in its reply.
 * @param change The servers joining and leaving.
 * @return The packet, length prefix included.
 */
export function encodeReconfigRequest(xid: number, change: ReconfigChange): Buffer {
  const joining = change.joining?.length ? change.joining.join(',') : undefined;
  const leaving = change.leaving?.length ? change.leaving.join(',') : undefined;
  const version = Buffer.alloc(8);
  version.writeBigInt64BE(-1n, 0);
  return frame(
    Buffer.concat([
      header(xid, OpCode.reconfig),
      ustring(joining),
      ustring(leaving),
      ustring(undefined),
      version,
    ]),
  );
}

/**
 * The data of a `GetDataResponse` (what getData and reconfig answer), read after the reply's
 * `ReplyHeader`.
 *
 * @param body The packet's bytes after the length.
 * @return The node's data.
 */
export function decodeDataReply(body: Buffer): Buffer {
  const reader = new Reader(body, 'GetDataResponse');
  reader.int();
  reader.long();
  reader.int();
  return reader.buffer();
}

function header(xid: number, type: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeInt32BE(xid, 0);
  bytes.writeInt32BE(type, 4);
  return bytes;
}

function int(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value, 0);
  return bytes;
}

/** A jute ustring: its length then its UTF-8 bytes; -1 for none. */
function ustring(value: string | undefined): Buffer {
  if (value === undefined) return int(-1);
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([int(bytes.length), bytes]);
}

function frame(body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length, 0);
  return Buffer.concat([length, body]);
}

class Reader {
  private offset = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly record: string,
  ) {}

  remaining(): number {
    return this.bytes.length - this.offset;
  }

  int(): number {
    this.need(4);
    const value = this.bytes.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  long(): bigint {
    this.need(8);
    const value = this.bytes.readBigInt64BE(this.offset);
    this.offset += 8;
    return value;
  }

  boolean(): boolean {
    this.need(1);
    return this.bytes[this.offset++] !== 0;
  }

  buffer(): Buffer {
    const length = this.int();
    if (length < 0) return Buffer.alloc(0);
    this.need(length);
    const value = Buffer.from(this.bytes.subarray(this.offset, this.offset + length));
    this.offset += length;
    return value;
  }

  private need(bytes: number): void {
    if (this.remaining() < bytes) {
      throw new Error(`Truncated ${this.record}: ${bytes} more bytes needed at ${this.offset}`);
    }
  }
}
