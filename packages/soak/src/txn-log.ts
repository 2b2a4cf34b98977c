/**
 * Reads ZooKeeper's transaction logs (`<dataDir>/version-2/log.*`): the server's own record of
 * every change, with its zxid, the session that made it and the leader's wall-clock time. The
 * soak judges its workers against this record, which no worker can fake.
 *
 * Layout (ZooKeeper 3.5+ `FileTxnLog`, jute binary): a header `{int magic "ZKLG"; int version;
 * long dbid}`, then entries `{long crc; buffer entry; byte 'B'}` until an empty entry (the file
 * is preallocated with zeros). An entry is `TxnHeader {long clientId; int cxid; long zxid; long
 * time; int type}` followed by the type's record (and a digest, ignored here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** ZooKeeper's op codes that appear in the log (ZooDefs.OpCode). */
export const OpCode = {
  create: 1,
  delete: 2,
  setData: 5,
  setAcl: 7,
  check: 13,
  multi: 14,
  create2: 15,
  createContainer: 19,
  deleteContainer: 20,
  createTtl: 21,
  createSession: -10,
  closeSession: -11,
  error: -1,
} as const;

/** One change to the tree, as the soak needs it. */
export type TxnOp =
  | {
      readonly op: 'create';
      readonly path: string;
      readonly ephemeral: boolean;
      readonly container: boolean;
    }
  | { readonly op: 'delete'; readonly path: string; readonly container: boolean }
  /** `paths` is undefined when the server logs closes without their paths (closeSessionTxn off). */
  | { readonly op: 'close-session'; readonly paths: readonly string[] | undefined }
  | { readonly op: 'create-session'; readonly timeoutMs: number }
  | { readonly op: 'other'; readonly type: number };

/** One logged transaction. */
export interface Txn {
  readonly zxid: number;
  /** The session that made it, hex as clients print it. */
  readonly session: string;
  /** The leader's wall clock when it prepared the transaction (ms). */
  readonly time: number;
  readonly type: number;
  /** Its changes (a multi has several; a failed request none). */
  readonly ops: readonly TxnOp[];
}

const MAGIC = 0x5a4b4c47; // "ZKLG"

/** A cursor over jute's big-endian binary encoding. */
class JuteReader {
  offset = 0;
  constructor(private readonly buffer: Buffer) {}

  get remaining(): number {
    return this.buffer.length - this.offset;
  }
  int(): number {
    const value = this.buffer.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }
  long(): bigint {
    const value = this.buffer.readBigInt64BE(this.offset);
    this.offset += 8;
    return value;
  }
  byte(): number {
    const value = this.buffer.readInt8(this.offset);
    this.offset += 1;
    return value;
  }
  boolean(): boolean {
    return this.byte() !== 0;
  }
  buffer_(): Buffer {
    const length = this.int();
    if (length < 0) return Buffer.alloc(0);
    if (length > this.remaining) throw new RangeError('jute buffer past the end');
    const value = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
  ustring(): string {
    return this.buffer_().toString('utf8');
  }
  acls(): void {
    const count = this.int();
    for (let index = 0; index < count; index++) {
      this.int(); // perms
      this.ustring(); // scheme
      this.ustring(); // id
    }
  }
}

function hexSession(value: bigint): string {
  return BigInt.asUintN(64, value).toString(16);
}

/** Decodes the record of one (sub-)transaction of `type`. */
function decodeOps(type: number, reader: JuteReader): TxnOp[] {
  switch (type) {
    case OpCode.create:
    case OpCode.create2: {
      const path = reader.ustring();
      reader.buffer_();
      reader.acls();
      const ephemeral = reader.boolean();
      return [{ op: 'create', path, ephemeral, container: false }];
    }
    case OpCode.createContainer:
    case OpCode.createTtl: {
      const path = reader.ustring();
      return [{ op: 'create', path, ephemeral: false, container: type === OpCode.createContainer }];
    }
    case OpCode.delete:
    case OpCode.deleteContainer:
      return [{ op: 'delete', path: reader.ustring(), container: type === OpCode.deleteContainer }];
    case OpCode.closeSession: {
      if (reader.remaining < 4) return [{ op: 'close-session', paths: undefined }];
      const count = reader.int();
      const paths: string[] = [];
      for (let index = 0; index < count; index++) paths.push(reader.ustring());
      return [{ op: 'close-session', paths }];
    }
    case OpCode.createSession:
      return [{ op: 'create-session', timeoutMs: reader.int() }];
    case OpCode.multi: {
      const count = reader.int();
      const ops: TxnOp[] = [];
      for (let index = 0; index < count; index++) {
        const subType = reader.int();
        const data = reader.buffer_();
        if (subType === OpCode.error) continue;
        ops.push(...decodeOps(subType, new JuteReader(data)));
      }
      return ops;
    }
    case OpCode.error:
      return [];
    default:
      return [{ op: 'other', type }];
  }
}

/**
 * Decodes one transaction log file.
 *
 * @param bytes The file's content.
 * @return Its transactions in file order; stops at the preallocated zeros or a torn entry.
 */
export function parseTxnLog(bytes: Buffer): Txn[] {
  const reader = new JuteReader(bytes);
  if (bytes.length < 16 || reader.int() !== MAGIC) throw new Error('not a ZooKeeper txn log');
  reader.int(); // version
  reader.long(); // dbid
  const txns: Txn[] = [];
  while (reader.remaining >= 12) {
    reader.long(); // crc
    const length = reader.int();
    if (length <= 0 || length + 1 > reader.remaining) break;
    const entry = new JuteReader(bytes.subarray(reader.offset, reader.offset + length));
    reader.offset += length;
    if (reader.byte() !== 0x42) break; // 'B': end of record; anything else is a torn write
    const session = hexSession(entry.long());
    entry.int(); // cxid
    const zxid = Number(entry.long());
    const time = Number(entry.long());
    const type = entry.int();
    let ops: TxnOp[];
    try {
      ops = decodeOps(type, entry);
    } catch {
      ops = [{ op: 'other', type }];
    }
    txns.push({ zxid, session, time, type, ops });
  }
  return txns;
}

/**
 * Every transaction a quorum logged: the union of the members' logs by zxid, keeping those in
 * at least `quorum` of them (a committed transaction was logged by a quorum; a proposal logged
 * by one member alone may never have been committed).
 *
 * @param dataDirs The members' data directories.
 * @param quorum How many logs must hold a transaction (2 of 3).
 * @return The transactions in zxid order, and how many were left out.
 */
export function readQuorumLog(
  dataDirs: readonly string[],
  quorum: number,
): { txns: Txn[]; unconfirmed: number } {
  const seen = new Map<number, { txn: Txn; members: number }>();
  for (const dataDir of dataDirs) {
    const dir = join(dataDir, 'version-2');
    let files: string[];
    try {
      files = readdirSync(dir).filter((name) => name.startsWith('log.'));
    } catch {
      continue;
    }
    const own = new Map<number, Txn>();
    for (const file of files) {
      for (const txn of parseTxnLog(readFileSync(join(dir, file)))) own.set(txn.zxid, txn);
    }
    for (const [zxid, txn] of own) {
      const entry = seen.get(zxid);
      if (entry) entry.members += 1;
      else seen.set(zxid, { txn, members: 1 });
    }
  }
  const txns: Txn[] = [];
  let unconfirmed = 0;
  for (const { txn, members } of seen.values()) {
    if (members >= quorum) txns.push(txn);
    else unconfirmed += 1;
  }
  txns.sort((a, b) => a.zxid - b.zxid);
  return { txns, unconfirmed };
}
