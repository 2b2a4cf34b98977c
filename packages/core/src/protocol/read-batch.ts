/**
 * Watchless `get`s made in one turn of the event loop go to the server as one multiRead
 * (ZooKeeper 3.6+): one request and one reply for all of them instead of one each. A deep
 * pipeline of reads was bound by the server's work per request (its request pipeline, a reply
 * packet each), not by the client: 256 gets in flight on one session ran at 110,698 gets/s
 * batched against 17,805 one request each, at 2.6 against 57 µs of server CPU per get
 * (BENCHMARKS.md, "Reads in one request": `pnpm bench --scenario pipelined-get --rounds 3`).
 *
 * ## Why a batch reads what the same gets sent one by one would have read
 *
 * It relies on these guarantees of ZooKeeper (FinalRequestProcessor, ClientCnxn):
 * - **A session's requests are processed and answered in the order they were sent.** A batch
 *   only gathers a run of consecutive watchless gets: any other request (a write, a read that
 *   sets a watch, a close) ends the run first and goes after it. So nothing of the session's
 *   own moves past a get: it sees every write the session made before it and none made after.
 * - **A multiRead's reads run one after another inside one request**, with no write of any
 *   session applied between them: they read one state of the tree, which the same gets sent one
 *   by one could have read too (had no write landed between them); each gets its own result,
 *   and an error (NoNode, NoAuth) fails that read only (`ErrorResult`).
 * - **A multiRead sets no watch** (the server reads its ops without the watch flag): only gets
 *   without a watch join a batch.
 * - **Its reply comes at its place in the session's order**, so the gets' results reach their
 *   callers where their replies would have, before any event or reply sent after them.
 *
 * ## When a batch's reply is over `maxFrameBytes`
 *
 * The reply is dropped unread (FrameReader); the gets are sent again one by one, each then
 * answered as it would have been alone — but only when the session sent no request since the
 * batch that could change what they read (a write: anything but a data read). A get sent again
 * is read by the server after the requests sent since; those were reads only, so it still reads
 * what it would have read when it was made, or later data, never data the session itself wrote
 * after it. Its caller still hears in the order the calls were made: the replies to the
 * requests sent after the batch, and the events read among them, are held (in wire order)
 * until the gets sent again are answered (the pipeline's `held`). If a write went after the
 * gets, they fail with ZkError `ReplyTooLarge` instead, which says so. Either way the session
 * learns: batches after hold at most as many gets as half of `maxFrameBytes` fits at the
 * largest get reply seen lately (`RecentLargest`: the last one or two windows of 1,024 get
 * replies), so a session whose nodes are large batches fewer of them (down to none), and one
 * that read a large node once batches fully again later.
 *
 * A server that does not know multiRead (before 3.6) answers it Unimplemented (its
 * UnimplementedRequestProcessor; a reply with no results is taken the same way): the gets are
 * sent again the same way and the session stops batching.
 */
import { Rc, ZkError, type ZkErrorCode } from '../errors/errors';
import { OpCode } from '../wire/codes';
import { type JuteReader, ProtocolError, unreadableReply } from '../wire/jute';

/** At most this many gets in one multiRead. */
export const MAX_BATCH_READS = 64;

/** A batch's request stays under this many bytes of paths (the server's jute.maxbuffer is 1 MiB). */
export const MAX_BATCH_PATH_BYTES = 64 * 1024;

/** What a batch needs of a get's pending request (the pipeline's PendingRequest). */
export interface BatchedRequest {
  readonly decode: ((reader: JuteReader) => unknown) | undefined;
  readonly reply: (rc: number, value?: unknown, cause?: Error) => void;
}

/** One watchless get: its own frame (sent as it is when it goes alone), its server path. */
export interface BatchMember<R extends BatchedRequest = BatchedRequest> {
  readonly xid: number;
  readonly frame: Buffer;
  readonly request: R;
  readonly path: string;
}

/** A multiRead in flight: the gets it answers, and when it was sent. */
export class ReadBatch<R extends BatchedRequest = BatchedRequest> {
  constructor(
    readonly members: readonly BatchMember<R>[],
    /** The pipeline's count of frames sent, this one included. */
    readonly sentSeq: number,
  ) {}

  /** When it was queued to be written (performance.now()). */
  sentAt = 0;

  /**
   * Answers each get from the MultiResponse in `reader` (after a ReplyHeader with `err` 0).
   * Returns the largest single get result read, in bytes. Throws ProtocolError on a reply that
   * does not fit the batch, after failing the gets not yet answered.
   */
  answer(reader: JuteReader): number {
    const members = this.members;
    let largest = 0;
    let index = 0;
    try {
      for (; index < members.length; index++) {
        const request = members[index]!.request;
        const type = reader.int();
        const done = reader.boolean();
        reader.int(); // the header's err; an ErrorResult repeats it
        if (done)
          throw new ProtocolError(`multiRead: ${index} results for ${members.length} reads`);
        if (type === -1) {
          request.reply(reader.int());
          continue;
        }
        if (type !== OpCode.getData || !request.decode) {
          throw new ProtocolError(`multiRead: a result of type ${type} for a getData`);
        }
        const before = reader.remaining;
        const value = request.decode(reader);
        largest = Math.max(largest, before - reader.remaining);
        request.reply(Rc.ok, value);
      }
      reader.int();
      if (!reader.boolean()) throw new ProtocolError('multiRead: more results than reads');
      reader.int();
      return largest;
    } catch (error) {
      const cause = unreadableReply(error);
      for (const member of members.slice(index)) {
        member.request.reply(Rc.connectionLoss, undefined, cause);
      }
      throw error;
    }
  }

  /** Fails every get of the batch with `rc`. */
  fail(rc: number, cause?: Error): void {
    for (const member of this.members) member.request.reply(rc, undefined, cause);
  }
}

/** Opcodes that read data and change nothing on the server (a get sent again may pass them). */
const DATA_READS = new Set<number>([
  OpCode.exists,
  OpCode.getData,
  OpCode.getACL,
  OpCode.getChildren,
  OpCode.getChildren2,
  OpCode.multiRead,
  OpCode.getEphemerals,
  OpCode.getAllChildrenNumber,
  OpCode.whoAmI,
]);

/** Whether a request frame (length, xid, type, …) only reads data. */
export function isDataRead(frame: Buffer): boolean {
  return frame.length >= 12 && DATA_READS.has(frame.readInt32BE(8));
}

/**
 * How many gets the next batch may hold: {@link MAX_BATCH_READS}, or fewer once a get's result
 * of `largestRead` bytes was seen — as many as fit twice in `maxFrameBytes`, at least 1 (no
 * batch).
 */
export function batchLimit(maxFrameBytes: number, largestRead: number): number {
  if (largestRead <= 0) return MAX_BATCH_READS;
  return Math.max(1, Math.min(MAX_BATCH_READS, Math.floor(maxFrameBytes / (2 * largestRead))));
}

/** Get replies per window of {@link RecentLargest}. */
const LARGEST_WINDOW = 1_024;

/**
 * The largest get reply (bytes) of the last one or two windows of {@link LARGEST_WINDOW} get
 * replies: what bounds the next batches ({@link batchLimit}). One large reply shrinks the
 * batches for a while, not for good: once two windows passed without one as large, the bound
 * is what the session reads now.
 */
export class RecentLargest {
  private current = 0;
  private previous = 0;
  private seen = 0;

  /** The largest reply of this window and the one before. */
  get value(): number {
    return Math.max(this.current, this.previous);
  }

  /** A get reply of `bytes` (or `count` of them, the largest `bytes`) was read. */
  note(bytes: number, count = 1): void {
    if (bytes > this.current) this.current = bytes;
    this.seen += count;
    if (this.seen >= LARGEST_WINDOW) {
      this.previous = this.current;
      this.current = 0;
      this.seen = 0;
    }
  }
}

/**
 * Why the gets of a batch whose reply could not be used fail rather than go again: a write went
 * after them (`code` ReplyTooLarge for a reply over `maxFrameBytes`, Unimplemented for a server
 * without multiRead).
 */
export function batchNotResent(batch: ReadBatch, code: ZkErrorCode, why: string): ZkError {
  return new ZkError(
    code,
    `this get was sent in one multiRead with ${batch.members.length - 1} others and ${why}; the session wrote since, so it is not sent again alone (that could read its own later write): raise maxFrameBytes, or create the client with batchReads: false`,
  );
}
