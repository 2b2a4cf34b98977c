/**
 * ZooKeeper's client records in jute: op codes, reserved xids, watch event types, and an encoder
 * or decoder for every request and reply this client speaks, each frame sized exactly once.
 *
 * Facts from Apache ZooKeeper (read, not copied): record layouts from `zookeeper.jute`
 * (org.apache.zookeeper.data and .proto), op codes from `ZooDefs.OpCode`, watch modes from
 * `ZooDefs.AddWatchModes`, event types from `Watcher.Event.EventType`, watcher types from
 * `Watcher.WatcherType`, reserved xids and the order of a connection's first packets from
 * `ClientCnxn`, multi framing from `MultiOperationRecord` and `MultiResponse`.
 */
import type { ClientInfo, TransportOpResult } from '../transport/transport';
import type { Acl } from '../znode/acl';
import type { Stat } from '../znode/stat';
import { createOpCode, OpCode, Xid } from './codes';
import { type JuteReader, JuteWriter, ProtocolError, ustringBytes } from './jute';

// ---- encoding ----

/** Bytes of the frame's length prefix and RequestHeader. */
const HEAD = 4 + 8;

function frame(size: number, xid: number, type: number): JuteWriter {
  return new JuteWriter(size)
    .int(size - 4)
    .int(xid)
    .int(type);
}

function aclBytes(acl: readonly Acl[]): number {
  let bytes = 4;
  for (const entry of acl) bytes += 4 + ustringBytes(entry.scheme) + ustringBytes(entry.id);
  return bytes;
}

function writeAcl(writer: JuteWriter, acl: readonly Acl[]): void {
  writer.int(acl.length);
  for (const entry of acl) writer.int(entry.permissions).ustring(entry.scheme).ustring(entry.id);
}

/** `ConnectRequest`, the first frame of every connection. */
export interface ConnectRequest {
  readonly lastZxidSeen: number;
  readonly timeOut: number;
  /** `0n` for a new session. */
  readonly sessionId: bigint;
  /** 16 bytes (zeros for a new session). */
  readonly password: Uint8Array;
  readonly readOnly: boolean;
}

export function encodeConnectRequest(request: ConnectRequest): Buffer {
  const size = 4 + 4 + 8 + 4 + 8 + 4 + request.password.length + 1;
  return new JuteWriter(size)
    .int(size - 4)
    .int(0) // protocolVersion
    .long(request.lastZxidSeen)
    .int(request.timeOut)
    .bigLong(request.sessionId)
    .buffer(request.password)
    .boolean(request.readOnly)
    .finish();
}

/** A request that is its header alone: ping, closeSession, whoAmI. */
export function encodeHeaderOnly(xid: number, type: number): Buffer {
  return frame(HEAD, xid, type).finish();
}

/** `{ ustring path; boolean watch }`: getData, exists, getChildren, getChildren2. */
export function encodePathWatch(xid: number, type: number, path: string, watch: boolean): Buffer {
  return frame(HEAD + ustringBytes(path) + 1, xid, type)
    .ustring(path)
    .boolean(watch)
    .finish();
}

/** `{ ustring path }`: sync, getACL, getAllChildrenNumber, getEphemerals. */
export function encodePath(xid: number, type: number, path: string): Buffer {
  return frame(HEAD + ustringBytes(path), xid, type)
    .ustring(path)
    .finish();
}

/** `{ ustring path; int n }`: delete and check (version), addWatch (mode), removeWatches (type). */
export function encodePathInt(xid: number, type: number, path: string, value: number): Buffer {
  return frame(HEAD + ustringBytes(path) + 4, xid, type)
    .ustring(path)
    .int(value)
    .finish();
}

/** Bytes of a CreateRequest or CreateTTLRequest body. */
function createBodyBytes(path: string, data: Uint8Array, acl: readonly Acl[], type: number) {
  return (
    ustringBytes(path) + 4 + data.length + aclBytes(acl) + 4 + (type === OpCode.createTTL ? 8 : 0)
  );
}

function writeCreateBody(
  writer: JuteWriter,
  type: number,
  path: string,
  data: Uint8Array,
  acl: readonly Acl[],
  flags: number,
  ttlMs: number,
): void {
  writer.ustring(path).buffer(data);
  writeAcl(writer, acl);
  writer.int(flags);
  if (type === OpCode.createTTL) writer.long(ttlMs);
}

/** `CreateRequest` (create2, createContainer) or `CreateTTLRequest` (createTTL). */
export function encodeCreate(
  xid: number,
  path: string,
  data: Uint8Array,
  acl: readonly Acl[],
  flags: number,
  ttlMs: number,
): Buffer {
  const type = createOpCode(flags);
  const writer = frame(HEAD + createBodyBytes(path, data, acl, type), xid, type);
  writeCreateBody(writer, type, path, data, acl, flags, ttlMs);
  return writer.finish();
}

/** `SetDataRequest`. */
export function encodeSetData(xid: number, path: string, data: Uint8Array, version: number) {
  return frame(HEAD + ustringBytes(path) + 4 + data.length + 4, xid, OpCode.setData)
    .ustring(path)
    .buffer(data)
    .int(version)
    .finish();
}

/** `SetACLRequest`. */
export function encodeSetAcl(xid: number, path: string, acl: readonly Acl[], version: number) {
  const writer = frame(HEAD + ustringBytes(path) + aclBytes(acl) + 4, xid, OpCode.setACL);
  writer.ustring(path);
  writeAcl(writer, acl);
  return writer.int(version).finish();
}

/** `AuthPacket` (type 0), always with xid {@link Xid.auth}. */
export function encodeAuth(scheme: string, credentials: Uint8Array): Buffer {
  return frame(HEAD + 4 + ustringBytes(scheme) + 4 + credentials.length, Xid.auth, OpCode.auth)
    .int(0)
    .ustring(scheme)
    .buffer(credentials)
    .finish();
}

/** `GetSASLRequest` (op sasl): one SASL token to the server. */
export function encodeSasl(xid: number, token: Uint8Array): Buffer {
  return frame(HEAD + 4 + token.length, xid, OpCode.sasl)
    .buffer(token)
    .finish();
}

/** The watches a connection re-registers: server paths, by kind. */
export interface WatchLists {
  readonly data: readonly string[];
  readonly exist: readonly string[];
  readonly child: readonly string[];
  readonly persistent: readonly string[];
  readonly persistentRecursive: readonly string[];
}

function stringsBytes(values: readonly string[]): number {
  let bytes = 4;
  for (const value of values) bytes += ustringBytes(value);
  return bytes;
}

function writeStrings(writer: JuteWriter, values: readonly string[]): void {
  writer.int(values.length);
  for (const value of values) writer.ustring(value);
}

/**
 * `SetWatches` (when no persistent watch is among them, for servers before 3.6) or
 * `SetWatches2`, with xid {@link Xid.setWatches}.
 */
export function encodeSetWatches(relativeZxid: number, lists: WatchLists): Buffer {
  const persistent = lists.persistent.length > 0 || lists.persistentRecursive.length > 0;
  const type = persistent ? OpCode.setWatches2 : OpCode.setWatches;
  let size = HEAD + 8 + stringsBytes(lists.data) + stringsBytes(lists.exist);
  size += stringsBytes(lists.child);
  if (persistent) size += stringsBytes(lists.persistent) + stringsBytes(lists.persistentRecursive);
  const writer = frame(size, Xid.setWatches, type).long(relativeZxid);
  writeStrings(writer, lists.data);
  writeStrings(writer, lists.exist);
  writeStrings(writer, lists.child);
  if (persistent) {
    writeStrings(writer, lists.persistent);
    writeStrings(writer, lists.persistentRecursive);
  }
  return writer.finish();
}

/** One op of a transaction, in server paths. */
export type MultiOp =
  | {
      readonly type: 'create';
      readonly path: string;
      readonly data: Uint8Array;
      readonly acl: readonly Acl[];
      readonly flags: number;
      readonly ttlMs: number;
    }
  | { readonly type: 'delete'; readonly path: string; readonly version: number }
  | {
      readonly type: 'set';
      readonly path: string;
      readonly data: Uint8Array;
      readonly version: number;
    }
  | { readonly type: 'check'; readonly path: string; readonly version: number };

const MULTI_HEADER = 4 + 1 + 4;

function multiOpCode(op: MultiOp): number {
  switch (op.type) {
    case 'create':
      return createOpCode(op.flags);
    case 'delete':
      return OpCode.delete;
    case 'set':
      return OpCode.setData;
    case 'check':
      return OpCode.check;
  }
}

/** `MultiOperationRecord`: each op behind a MultiHeader, then the closing header. */
export function encodeMulti(xid: number, ops: readonly MultiOp[]): Buffer {
  let size = HEAD + MULTI_HEADER;
  for (const op of ops) {
    size += MULTI_HEADER;
    if (op.type === 'create')
      size += createBodyBytes(op.path, op.data, op.acl, createOpCode(op.flags));
    else if (op.type === 'set') size += ustringBytes(op.path) + 4 + op.data.length + 4;
    else size += ustringBytes(op.path) + 4;
  }
  const writer = frame(size, xid, OpCode.multi);
  for (const op of ops) {
    const type = multiOpCode(op);
    writer.int(type).boolean(false).int(-1);
    if (op.type === 'create') {
      writeCreateBody(writer, type, op.path, op.data, op.acl, op.flags, op.ttlMs);
    } else if (op.type === 'set') writer.ustring(op.path).buffer(op.data).int(op.version);
    else writer.ustring(op.path).int(op.version);
  }
  return writer.int(-1).boolean(true).int(-1).finish();
}

/**
 * `MultiOperationRecord` of watchless getData ops, sent as a multiRead (ZooKeeper 3.6+): each
 * op behind a MultiHeader, then the closing header. The server reads a multiRead's ops without
 * their watch flag, so none is set.
 */
export function encodeMultiRead(xid: number, paths: readonly string[]): Buffer {
  let size = HEAD + MULTI_HEADER;
  for (const path of paths) size += MULTI_HEADER + ustringBytes(path) + 1;
  const writer = frame(size, xid, OpCode.multiRead);
  for (const path of paths)
    writer.int(OpCode.getData).boolean(false).int(-1).ustring(path).boolean(false);
  return writer.int(-1).boolean(true).int(-1).finish();
}

// ---- decoding ----

/** `ConnectResponse`: `timeOut` <= 0 means the session asked for is gone (expired). */
export interface ConnectResponse {
  readonly timeOut: number;
  readonly sessionId: bigint;
  readonly password: Buffer;
  readonly readOnly: boolean;
}

export function decodeConnectResponse(reader: JuteReader): ConnectResponse {
  reader.int(); // protocolVersion
  const timeOut = reader.int();
  const sessionId = reader.bigLong();
  const password = reader.buffer();
  // Servers before 3.4 sent no readOnly flag.
  const readOnly = reader.remaining > 0 ? reader.boolean() : false;
  return { timeOut, sessionId, password, readOnly };
}

/** The hex form of a session id, as ZooKeeper prints it (and `Stat.ephemeralOwner` reads). */
export function sessionIdHex(sessionId: bigint): string {
  return BigInt.asUintN(64, sessionId).toString(16);
}

/** `Stat` (68 bytes). */
export function readStat(reader: JuteReader): Stat {
  const czxid = reader.long();
  const mzxid = reader.long();
  const ctime = reader.long();
  const mtime = reader.long();
  const version = reader.int();
  const cversion = reader.int();
  const aversion = reader.int();
  const ephemeralOwner = reader.longHex();
  const dataLength = reader.int();
  const numChildren = reader.int();
  const pzxid = reader.long();
  return {
    czxid,
    mzxid,
    pzxid,
    ctime,
    mtime,
    version,
    cversion,
    aversion,
    ephemeralOwner,
    dataLength,
    numChildren,
  };
}

/** `vector<ACL>`. */
export function readAcl(reader: JuteReader): Acl[] {
  return reader.vector(12, () => {
    const permissions = reader.int();
    const scheme = reader.ustring();
    const id = reader.ustring();
    return { permissions, scheme, id };
  });
}

/** `GetDataResponse`: the data and the Stat. */
export function readNodeData(reader: JuteReader): { data: Buffer; stat: Stat } {
  const data = reader.buffer();
  return { data, stat: readStat(reader) };
}

/** `GetChildren2Response`: the names and the listed node's Stat. */
export function readChildrenAndStat(reader: JuteReader): { children: string[]; stat: Stat } {
  const children = reader.strings();
  return { children, stat: readStat(reader) };
}

/** `GetACLResponse`. */
export function readAclAndStat(reader: JuteReader): { acl: Acl[]; stat: Stat } {
  const acl = readAcl(reader);
  return { acl, stat: readStat(reader) };
}

/** `Create2Response`: the created path (back out of the chroot) and its Stat. */
export function readCreated(
  reader: JuteReader,
  paths: { fromServer(path: string): string | undefined },
): { path: string; stat: Stat } {
  const path = reader.ustring();
  return { path: paths.fromServer(path) ?? path, stat: readStat(reader) };
}

/** One int (`GetAllChildrenNumberResponse`). */
export function readInt(reader: JuteReader): number {
  return reader.int();
}

/** `vector<ustring>` (`GetEphemeralsResponse`). */
export function readStrings(reader: JuteReader): string[] {
  return reader.strings();
}

/** `WatcherEvent` of a notification (xid {@link Xid.notification}). */
export interface WatcherEvent {
  readonly type: number;
  readonly state: number;
  readonly path: string;
}

export function readWatcherEvent(reader: JuteReader): WatcherEvent {
  const type = reader.int();
  const state = reader.int();
  const path = reader.ustring();
  return { type, state, path };
}

/** `WhoAmIResponse`: one `ClientInfo` per authentication. */
export function readClientInfos(reader: JuteReader): ClientInfo[] {
  return reader.vector(8, () => {
    const authScheme = reader.ustring();
    const user = reader.ustring();
    return { authScheme, user };
  });
}

/** `MultiResponse`: results behind MultiHeaders until the one marked done (server paths). */
export function readMultiResults(reader: JuteReader): TransportOpResult[] {
  const results: TransportOpResult[] = [];
  for (;;) {
    const type = reader.int();
    const done = reader.boolean();
    reader.int(); // err, repeated by the ErrorResponse that follows an error header
    if (done) return results;
    switch (type) {
      case OpCode.create:
        results.push({ type: 'create', path: reader.ustring(), stat: undefined });
        break;
      case OpCode.create2:
      case OpCode.createTTL:
      case OpCode.createContainer: {
        const path = reader.ustring();
        results.push({ type: 'create', path, stat: readStat(reader) });
        break;
      }
      case OpCode.delete:
      case OpCode.deleteContainer:
        results.push({ type: 'delete' });
        break;
      case OpCode.setData:
        results.push({ type: 'set', stat: readStat(reader) });
        break;
      case OpCode.check:
        results.push({ type: 'check' });
        break;
      case OpCode.error:
        results.push({ type: 'error', rc: reader.int() });
        break;
      default:
        throw new ProtocolError(`multi: result of unknown type ${type}`);
    }
  }
}
