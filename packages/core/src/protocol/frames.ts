/**
 * ZooKeeper's framing, read: 4-byte length-prefixed frames out of a byte stream, each at most
 * `maxFrameBytes` held, a larger one's header handed over and the rest dropped.
 */
import { ProtocolError } from '../wire/jute';

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
