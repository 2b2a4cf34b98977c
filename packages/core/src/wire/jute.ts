/**
 * Jute, ZooKeeper's binary record encoding: a writer into one exactly-sized Buffer per frame and
 * a bounds-checked reader over a received frame that never reads past it nor trusts a length.
 *
 * The encoding (from ZooKeeper's `BinaryOutputArchive`, which is Java's DataOutput): big-endian
 * `int` (4 bytes), `long` (8), `boolean` (1 byte, 0 or 1); `buffer` and `ustring` are an int
 * length then the bytes (UTF-8 for strings), -1 for null; `vector` is an int count then the
 * items, -1 for null. Every frame on the socket is prefixed by its int length.
 */

import { ZkError, ZkErrorCode } from '../errors/errors';
import { ZkrxError, type ZkrxErrorOptions } from '../errors/zkrx-error';

/**
 * A frame or record that breaks jute's rules: the connection that sent it cannot be trusted.
 * Internal: it reaches callers as the `cause` of a ZkError `MarshallingError`, hence its code.
 */
export class ProtocolError extends ZkrxError<'MarshallingError'> {
  protected static override readonly marker = '@zkrx/core.ProtocolError';
  declare static readonly isInstance: (value: unknown) => value is ProtocolError;
  override readonly name = 'ProtocolError';

  constructor(message: string, options?: ZkrxErrorOptions) {
    super('MarshallingError', message, options);
  }
}

/**
 * What a caller whose reply could not be decoded is told (as the cause of its ConnectionLoss:
 * applied or not, as for a lost connection): MarshallingError, with the decoder's error.
 */
export function unreadableReply(error: unknown): ZkError {
  return new ZkError(
    ZkErrorCode.MarshallingError,
    `unreadable reply: ${(error as Error).message}`,
    {
      cause: error,
    },
  );
}

const TWO_POW_32 = 2 ** 32;

/** Bytes of a `ustring` field holding `text` (length prefix included). */
export function ustringBytes(text: string): number {
  return 4 + Buffer.byteLength(text, 'utf8');
}

/**
 * Writes jute fields into a Buffer sized in advance: each request's encoder counts its bytes,
 * then writes them once (no growing, no copy but the data's own).
 *
 * ## Example
 * ```ts
 * const writer = new JuteWriter(4 + 8);
 * writer.int(8).int(1).int(11);
 * console.log(writer.finish().toString('hex'));
 * // Output: 000000080000000100000b
 * ```
 */
export class JuteWriter {
  readonly bytes: Buffer;
  private offset = 0;

  /** @param size The frame's exact size in bytes. */
  constructor(size: number) {
    this.bytes = Buffer.allocUnsafe(size);
  }

  int(value: number): this {
    this.offset = this.bytes.writeInt32BE(value, this.offset);
    return this;
  }

  /** A 64-bit value given as a JavaScript number (exact up to 2^53) or its two 32-bit halves. */
  long(value: number): this {
    const high = Math.floor(value / TWO_POW_32);
    const low = value - high * TWO_POW_32;
    this.offset = this.bytes.writeInt32BE(high | 0, this.offset);
    this.offset = this.bytes.writeUInt32BE(low >>> 0, this.offset);
    return this;
  }

  /** A 64-bit value from its high (signed) and low (unsigned) 32-bit halves. */
  longParts(high: number, low: number): this {
    this.offset = this.bytes.writeInt32BE(high | 0, this.offset);
    this.offset = this.bytes.writeUInt32BE(low >>> 0, this.offset);
    return this;
  }

  bigLong(value: bigint): this {
    this.offset = this.bytes.writeBigInt64BE(BigInt.asIntN(64, value), this.offset);
    return this;
  }

  boolean(value: boolean): this {
    this.bytes[this.offset++] = value ? 1 : 0;
    return this;
  }

  ustring(text: string): this {
    const start = this.offset + 4;
    const written = this.bytes.write(text, start, 'utf8');
    this.bytes.writeInt32BE(written, this.offset);
    this.offset = start + written;
    return this;
  }

  /** A `buffer` field; `null` writes jute's null (-1). */
  buffer(data: Uint8Array | null): this {
    if (data === null) return this.int(-1);
    this.int(data.length);
    this.bytes.set(data, this.offset);
    this.offset += data.length;
    return this;
  }

  /** The frame; throws if the counted size and the bytes written disagree (an encoder bug). */
  finish(): Buffer {
    if (this.offset !== this.bytes.length) {
      throw new Error(`jute: wrote ${this.offset} bytes into a frame of ${this.bytes.length}`);
    }
    return this.bytes;
  }
}

/**
 * Reads jute fields from one received frame. Every read checks the bytes left first, and every
 * length or count read from the wire is checked against them, so a hostile frame can neither
 * read out of bounds nor make the reader allocate more than the frame holds.
 */
export class JuteReader {
  offset: number;

  constructor(
    readonly bytes: Buffer,
    offset = 0,
    readonly end = bytes.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  int(): number {
    return this.bytes.readInt32BE(this.take(4, 'int'));
  }

  /** A 64-bit value as a number: exact while below 2^53 (zxids, times, counters). */
  long(): number {
    const at = this.take(8, 'long');
    return this.bytes.readInt32BE(at) * TWO_POW_32 + this.bytes.readUInt32BE(at + 4);
  }

  /** A 64-bit value as hex text of its unsigned form, as ZooKeeper prints session ids. */
  longHex(): string {
    const at = this.take(8, 'long');
    const high = this.bytes.readUInt32BE(at);
    const low = this.bytes.readUInt32BE(at + 4);
    if (high === 0) return low.toString(16);
    return high.toString(16) + low.toString(16).padStart(8, '0');
  }

  bigLong(): bigint {
    return this.bytes.readBigInt64BE(this.take(8, 'long'));
  }

  boolean(): boolean {
    const at = this.take(1, 'boolean');
    const value = this.bytes[at]!;
    if (value > 1) throw new ProtocolError(`jute: boolean byte ${value} at ${at}`);
    return value === 1;
  }

  /** A `ustring`; jute's null (-1) reads as `''`. */
  ustring(): string {
    const length = this.int();
    if (length === -1) return '';
    this.checkLength(length, 'ustring');
    const start = this.offset;
    this.offset += length;
    return this.bytes.toString('utf8', start, this.offset);
  }

  /** A `buffer`, copied out of the frame (so it never pins the socket's chunk); null reads as empty. */
  buffer(): Buffer {
    const length = this.int();
    if (length === -1) return Buffer.alloc(0);
    this.checkLength(length, 'buffer');
    const copy = Buffer.allocUnsafe(length);
    this.bytes.copy(copy, 0, this.offset, this.offset + length);
    this.offset += length;
    return copy;
  }

  /** A vector's count, checked against the bytes left (each item takes at least `minItemBytes`). */
  count(minItemBytes: number): number {
    const count = this.int();
    if (count === -1) return 0;
    if (count < 0 || count * minItemBytes > this.remaining) {
      throw new ProtocolError(
        `jute: vector of ${count} items at ${this.offset - 4} does not fit the ${this.remaining} bytes left`,
      );
    }
    return count;
  }

  /** A `vector` whose items `readItem` reads, each at least `minItemBytes` long (see `count`). */
  vector<T>(minItemBytes: number, readItem: (reader: this) => T): T[] {
    const count = this.count(minItemBytes);
    const items = new Array<T>(count);
    for (let index = 0; index < count; index++) items[index] = readItem(this);
    return items;
  }

  /** A `vector<ustring>`. */
  strings(): string[] {
    return this.vector(4, (reader) => reader.ustring());
  }

  skip(bytes: number): void {
    this.take(bytes, 'skip');
  }

  private checkLength(length: number, what: string): void {
    if (length < 0 || length > this.remaining) {
      throw new ProtocolError(
        `jute: ${what} of ${length} bytes at ${this.offset - 4} does not fit the ${this.remaining} bytes left`,
      );
    }
  }

  /** Moves past the next `bytes` (checked against those left); returns where they start. */
  private take(bytes: number, what: string): number {
    const at = this.offset;
    if (this.end - at < bytes) {
      throw new ProtocolError(
        `jute: truncated record: ${what} needs ${bytes} bytes at ${at}, ${this.end - at} left`,
      );
    }
    this.offset = at + bytes;
    return at;
  }
}
