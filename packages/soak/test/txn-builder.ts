/**
 * Test helper (not published): writes ZooKeeper transaction log files in jute's binary layout,
 * so the reader and the checker can be tested without a server.
 */
import { OpCode } from '../src/txn-log';

const int = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
};
const long = (value: bigint | number) => {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(BigInt.asIntN(64, BigInt(value)));
  return buffer;
};
const ustring = (text: string) => {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([int(bytes.length), bytes]);
};
const buffer = (bytes: Buffer) => Buffer.concat([int(bytes.length), bytes]);
const acl = () => Buffer.concat([int(1), int(31), ustring('world'), ustring('anyone')]);

/** One transaction to write. */
export interface TxnSpec {
  zxid: number;
  time: number;
  /** Hex session id. */
  session: string;
  type: number;
  record: Buffer;
}

export const records = {
  create: (path: string, ephemeral: boolean) =>
    Buffer.concat([
      ustring(path),
      buffer(Buffer.from('x')),
      acl(),
      Buffer.from([ephemeral ? 1 : 0]),
      int(3),
    ]),
  container: (path: string) =>
    Buffer.concat([ustring(path), buffer(Buffer.alloc(0)), acl(), int(0)]),
  delete: (path: string) => ustring(path),
  closeSession: (paths: readonly string[]) =>
    Buffer.concat([int(paths.length), ...paths.map(ustring)]),
  multi: (ops: readonly { type: number; record: Buffer }[]) =>
    Buffer.concat([int(ops.length), ...ops.flatMap((op) => [int(op.type), buffer(op.record)])]),
};

/** A whole log file: header, entries, then zero padding (as ZooKeeper preallocates). */
export function txnLogFile(txns: readonly TxnSpec[], options: { tornLast?: boolean } = {}): Buffer {
  const parts = [int(0x5a4b4c47), int(2), long(0)];
  txns.forEach((txn, index) => {
    const entry = Buffer.concat([
      long(BigInt(`0x${txn.session}`)),
      int(1),
      long(txn.zxid),
      long(txn.time),
      int(txn.type),
      txn.record,
      // a TxnDigest, as 3.6+ writes
      int(2),
      long(12345),
    ]);
    const torn = options.tornLast && index === txns.length - 1;
    parts.push(long(0), int(entry.length), torn ? entry.subarray(0, entry.length - 3) : entry);
    if (!torn) parts.push(Buffer.from([0x42]));
  });
  parts.push(Buffer.alloc(64));
  return Buffer.concat(parts);
}

/** Shorthands for a history's transactions. */
export const txn = {
  create: (
    zxid: number,
    time: number,
    session: string,
    path: string,
    ephemeral = true,
  ): TxnSpec => ({
    zxid,
    time,
    session,
    type: OpCode.create2,
    record: records.create(path, ephemeral),
  }),
  container: (zxid: number, time: number, session: string, path: string): TxnSpec => ({
    zxid,
    time,
    session,
    type: OpCode.createContainer,
    record: records.container(path),
  }),
  delete: (zxid: number, time: number, session: string, path: string): TxnSpec => ({
    zxid,
    time,
    session,
    type: OpCode.delete,
    record: records.delete(path),
  }),
  reap: (zxid: number, time: number, path: string): TxnSpec => ({
    zxid,
    time,
    session: '0',
    type: OpCode.deleteContainer,
    record: records.delete(path),
  }),
  close: (zxid: number, time: number, session: string, paths: readonly string[]): TxnSpec => ({
    zxid,
    time,
    session,
    type: OpCode.closeSession,
    record: records.closeSession(paths),
  }),
};
