/**
 * The request pipeline of one session: xids, requests in flight matched with their replies (the
 * watches they leave on the server recorded in server-watches.ts), and the special replies
 * (pings, auth, setWatches, notifications).
 */
import { Rc, ZkError, ZkErrorCode } from '../errors/errors';
import type { Reply } from '../transport/transport';
import { OpCode, WatchRegistration, Xid } from '../wire/codes';
import { JuteReader, ProtocolError, unreadableReply } from '../wire/jute';
import {
  encodeHeaderOnly,
  encodeMultiRead,
  readWatcherEvent,
  type WatcherEvent,
} from '../wire/records';
import type { Connection } from './connection';
import {
  type BatchMember,
  batchLimit,
  batchNotResent,
  isDataRead,
  MAX_BATCH_PATH_BYTES,
  ReadBatch,
  RecentLargest,
} from './read-batch';
import { ServerWatches } from './server-watches';

/** Reads a successful reply's record (after the ReplyHeader); may throw ProtocolError. */
export type Decoder<T> = (reader: JuteReader) => T;

/**
 * One request in flight: how to read its reply, whom to tell, and the watch it sets. The reply
 * callback gets the return code and, when 0, the decoded value.
 */
export class PendingRequest {
  constructor(
    readonly decode: Decoder<unknown> | undefined,
    readonly reply: Reply<unknown>,
    readonly watchRegistration: number = WatchRegistration.none,
    readonly watchPath: string = '',
    /** For removeWatches: ZooKeeper's WatcherType removed. */
    readonly removes: number = 0,
    /** A get without a watch: its server path (it may go in a multiRead, read-batch.ts). */
    readonly batchPath?: string,
  ) {}

  /** When it was queued to be written (performance.now()): its reply proves the server heard it. */
  sentAt = 0;
}

/** What the pipeline reports to its session. */
export interface PipelineEvents {
  /** A watch notification (server path). */
  onNotification(event: WatcherEvent): void;
  /** The server answered an auth packet (0, or AuthFailed). */
  onAuthReply(rc: number): void;
}

/** Frames held behind gets sent again, and the xids of those gets. */
interface HeldReplies {
  readonly awaiting: Set<number>;
  readonly frames: Array<() => void>;
}

interface Waiting {
  readonly xid: number;
  readonly frame: Buffer;
  readonly request: PendingRequest;
}

/**
 * Requests of one session. A request submitted while connected is sent at once (batched with
 * the others of the same turn of the event loop by the connection); one submitted while not
 * connected waits for the next connection. A lost connection fails every request in flight and
 * waiting with ConnectionLoss: whether one in flight was applied is unknown.
 */
export class RequestPipeline {
  /** The zxid of the last reply: sent in the ConnectRequest and setWatches. */
  lastZxid = 0;
  readonly watches = new ServerWatches();
  private nextXid = 1;
  private readonly inflight = new Map<number, PendingRequest | ReadBatch<PendingRequest>>();
  /** Requests waiting for a connection, by xid, in the order they were made (withdraw: O(1)). */
  private waiting = new Map<number, Waiting>();
  private connection: Connection | undefined;
  private setWatchesInFlight = 0;
  /** Set once the session is over: the return code every request fails with. */
  private deadRc: number | undefined;
  /** Watchless gets of this turn not sent yet: they go as one multiRead (read-batch.ts). */
  private run: BatchMember<PendingRequest>[] = [];
  private runPathBytes = 0;
  /** Frames sent so far, and the count when the last one that was not a data read went. */
  private sentSeq = 0;
  private lastWriteSeq = 0;
  /** The largest get result seen lately, in bytes: it bounds the next batches. */
  private readonly largestRead = new RecentLargest();
  /**
   * While gets of a batch are sent again one by one (their batch's reply was unusable), the
   * replies to requests sent after the batch come before theirs: those replies, and the events
   * read with them, wait here, in wire order, until the gets sent again are answered — so every
   * call is still answered at its place in the session's order.
   */
  private held: HeldReplies | undefined;
  /**
   * performance.now() before which the server surely last heard from the session: when the
   * latest request it answered (or the ConnectRequest it accepted) was queued. ZooKeeper expires
   * a session only after a whole session timeout without hearing from it, so the session lives
   * at least until `heardAt + timeout`, whatever this process or the network did since.
   * -Infinity until a read-write server answered.
   */
  heardAt = Number.NEGATIVE_INFINITY;
  /**
   * The connection's server speaks for the quorum (not a read-only server, whose answers say
   * nothing of the session on the quorum): its replies move {@link heardAt}.
   */
  private quorumHears = false;
  /** When each ping in flight was queued, oldest first (pings are answered in order). */
  private pingsSentAt: number[] = [];
  /**
   * The connection whose server said it knows multiRead ({@link allowBatches}): gets are batched
   * on it only. A server before 3.6 answers an unknown request and then closes the connection
   * (its UnimplementedRequestProcessor), which would drop every request in flight and suspend
   * the session: a batch is never the first thing a server hears of multiRead.
   */
  private batchesOn: Connection | undefined;
  /**
   * While a planned move drains the connection (planned-move.ts): requests made meanwhile wait
   * for the next connection, and this is called once nothing sent is unanswered.
   */
  private quiescing: { onDrained: (() => void) | undefined } | undefined;

  /**
   * @param batchReads Send the watchless gets of a turn as one multiRead; the client's
   *   `maxFrameBytes` bounds the batches. Off without it (the `batchReads: false` option).
   */
  constructor(
    private readonly events: PipelineEvents,
    private batchReads?: { readonly maxFrameBytes: number },
  ) {}

  private readonly awaitingReplies = (): number => this.inflight.size;

  /** Requests in flight or waiting (each get of a batch counts). */
  get outstanding(): number {
    let count = this.waiting.size + this.run.length;
    for (const entry of this.inflight.values()) {
      count += entry instanceof ReadBatch ? entry.members.length : 1;
    }
    return count;
  }

  /** A fresh xid (positive, wrapping before 2^31). */
  xid(): number {
    const xid = this.nextXid;
    this.nextXid = xid >= 0x7fff_fff0 ? 1 : xid + 1;
    return xid;
  }

  /** Sends (or queues) a request already encoded with `xid`. */
  submit(xid: number, frame: Buffer, request: PendingRequest): void {
    if (this.deadRc !== undefined) {
      const rc = this.deadRc;
      queueMicrotask(() => request.reply(rc));
      return;
    }
    const connection = this.connection;
    if (connection && !connection.isClosed && !this.quiescing) {
      if (request.batchPath !== undefined && this.batchReads && this.batchesOn === connection) {
        this.join(connection, { xid, frame, request, path: request.batchPath });
        return;
      }
      this.sendRun(connection);
      this.send(connection, xid, frame, request);
      return;
    }
    this.waiting.set(xid, { xid, frame, request });
  }

  private send(
    connection: Connection,
    xid: number,
    frame: Buffer,
    entry: PendingRequest | ReadBatch<PendingRequest>,
  ): void {
    this.inflight.set(xid, entry);
    this.sentSeq += 1;
    if (!isDataRead(frame)) this.lastWriteSeq = this.sentSeq;
    connection.send(frame);
    entry.sentAt = connection.queuedAt;
  }

  /** Sends a ping on the current connection (the heartbeat's); its reply moves {@link heardAt}. */
  ping(): void {
    const connection = this.connection;
    if (!connection || connection.isClosed) return;
    connection.send(encodeHeaderOnly(Xid.ping, OpCode.ping));
    this.pingsSentAt.push(connection.queuedAt);
  }

  /**
   * The server of `connection` knows multiRead (3.6 or later, as it said itself): the watchless
   * gets made on it from now on may go in batches. Nothing if it is not the current connection.
   */
  allowBatches(connection: Connection): void {
    if (connection === this.connection && !connection.isClosed) this.batchesOn = connection;
  }

  /** The server answered something queued at `sentAt`: it heard the session then or later. */
  heard(sentAt: number): void {
    if (this.quorumHears && sentAt > this.heardAt) this.heardAt = sentAt;
  }

  /** A watchless get joins this turn's run; a full run goes at once. */
  private join(connection: Connection, member: BatchMember<PendingRequest>): void {
    if (this.run.length === 0) connection.beforeFlush(this.sendRunNow);
    this.run.push(member);
    this.runPathBytes += member.path.length;
    const limit = batchLimit(this.batchReads?.maxFrameBytes ?? 0, this.largestRead.value);
    if (this.run.length >= limit || this.runPathBytes >= MAX_BATCH_PATH_BYTES) {
      this.sendRun(connection);
    }
  }

  private readonly sendRunNow = (): void => {
    if (this.connection) this.sendRun(this.connection);
  };

  /** Sends the run: a lone get as it is, several as one multiRead. */
  private sendRun(connection: Connection): void {
    const run = this.run;
    if (run.length === 0) return;
    this.run = [];
    this.runPathBytes = 0;
    if (run.length === 1) {
      const only = run[0]!;
      this.send(connection, only.xid, only.frame, only.request);
      return;
    }
    const xid = this.xid();
    const frame = encodeMultiRead(
      xid,
      run.map((member) => member.path),
    );
    this.send(connection, xid, frame, new ReadBatch(run, this.sentSeq + 1));
  }

  /**
   * A batch's reply could not be used (`why`): its gets go again one by one, unless the session
   * sent a write since (read-batch.ts says why); then they fail with `code`.
   */
  private resendBatch(batch: ReadBatch<PendingRequest>, code: ZkErrorCode, why: string): void {
    const connection = this.connection;
    if (this.lastWriteSeq > batch.sentSeq || !connection || connection.isClosed) {
      batch.fail(Rc.failedWithCause, batchNotResent(batch, code, why));
      return;
    }
    // Requests sent after the batch are answered before the gets sent now: hold their replies.
    const later = [...this.inflight.keys()];
    if (later.length > 0 || this.held) {
      this.held ??= { awaiting: new Set(), frames: [] };
      for (const member of batch.members) this.held.awaiting.add(member.xid);
    }
    for (const member of batch.members)
      this.send(connection, member.xid, member.frame, member.request);
  }

  /**
   * Whether the frame answering `xid` (0 for an event) waits behind gets sent again: queued
   * with `process` then. A reply to one of those gets goes at once, and the last of them lets
   * the queue go, in order.
   */
  private holds(xid: number, process: () => void): boolean {
    const held = this.held;
    if (!held) return false;
    if (!held.awaiting.has(xid)) {
      held.frames.push(process);
      return true;
    }
    held.awaiting.delete(xid);
    process();
    if (held.awaiting.size === 0) this.release();
    return true;
  }

  /**
   * Delivers every held frame, in order, and stops holding — unless one of them (another
   * batch's unusable reply) sends gets again: the frames after it are held behind those then.
   */
  private release(): void {
    const frames = this.held?.frames ?? [];
    this.held = undefined;
    for (let index = 0; index < frames.length; index++) {
      // (A frame delivered above may have begun a new hold: read the field again.)
      const again = this.held as HeldReplies | undefined;
      if (again) {
        again.frames.push(...frames.slice(index));
        return;
      }
      frames[index]!();
    }
  }

  /**
   * A connection established a session: re-registers the watches, sends `first` (auth
   * packets), then every waiting request, all in the same write.
   */
  attach(connection: Connection, first: readonly Buffer[], quorumHears = true): void {
    this.connection = connection;
    this.quorumHears = quorumHears;
    this.pingsSentAt = [];
    // A deep pipeline's replies are read in batches (connection.ts, coalescePauseMs).
    connection.awaiting = this.awaitingReplies;
    // Auth and setWatches go first, as they are: a new connection has no batch in flight, so
    // they never stand between a batch and its gets sent again (resendBatch).
    for (const frame of first) connection.send(frame);
    if (this.watches.size > 0) {
      for (const frame of this.watches.setWatchesFrames(this.lastZxid)) {
        this.setWatchesInFlight += 1;
        connection.send(frame);
      }
    }
    this.sendWaiting(connection);
  }

  /**
   * Stops sending on the connection (a planned move): requests made from now on wait for the
   * next connection (or {@link resume}), and `onDrained` is called once every request, ping
   * and setWatches sent on it has its reply — at once if none is unanswered. Calling it again
   * (a ping sent meanwhile) waits for that one too.
   */
  quiesce(onDrained: () => void): void {
    this.quiescing = { onDrained };
    this.checkDrained();
  }

  /** Nothing sent on the connection is unanswered (and no reply waits behind a resent get). */
  get drained(): boolean {
    return (
      this.inflight.size === 0 &&
      this.pingsSentAt.length === 0 &&
      this.setWatchesInFlight === 0 &&
      this.held === undefined &&
      this.run.length === 0
    );
  }

  private checkDrained(): void {
    const quiescing = this.quiescing;
    if (!quiescing?.onDrained || !this.drained) return;
    const onDrained = quiescing.onDrained;
    quiescing.onDrained = undefined;
    onDrained();
  }

  /** The move is off: the requests that waited go out on the connection, in order. */
  resume(): void {
    this.quiescing = undefined;
    const connection = this.connection;
    if (!connection || connection.isClosed) return;
    this.sendWaiting(connection);
  }

  /**
   * Lets go of a drained connection without failing anything: the requests that wait go out on
   * the next {@link attach} (a planned move's new connection), after the watches re-registered.
   */
  handOver(): void {
    this.quiescing = undefined;
    this.connection = undefined;
    this.setWatchesInFlight = 0;
    this.quorumHears = false;
    this.pingsSentAt = [];
    this.batchesOn = undefined;
  }

  /**
   * Takes back a request that waits for a connection (not written yet): true if it did, and the
   * request is then forgotten without a reply. A request already written stays in flight.
   */
  withdraw(xid: number): boolean {
    const inRun = this.run.findIndex((member) => member.xid === xid);
    if (inRun !== -1) {
      const [member] = this.run.splice(inRun, 1);
      this.runPathBytes -= member!.path.length;
      return true;
    }
    return this.waiting.delete(xid);
  }

  /** Sends every request that waited for a connection, in the order they were made. */
  private sendWaiting(connection: Connection): void {
    const waiting = this.waiting;
    this.waiting = new Map();
    for (const request of waiting.values())
      this.send(connection, request.xid, request.frame, request.request);
  }

  /** The session is over: everything outstanding fails, and so does every request made later. */
  shutdown(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    this.quiescing = undefined;
    this.deadRc = rc;
    this.connection = undefined;
    this.batchesOn = undefined;
    this.failAll(rc, reason, inFlightReason);
  }

  /** The connection is gone: every request in flight and waiting fails with `rc`. */
  detach(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    this.handOver();
    this.failAll(rc, reason, inFlightReason);
  }

  /**
   * Fails everything outstanding with `rc` (ConnectionLoss, or closing when the handle dies):
   * the requests sent with `inFlightReason` (they may have been applied), those never sent with
   * `reason`. In the order they were made.
   */
  failAll(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    // Replies already read (held behind gets sent again) are delivered first: they were answered.
    // Holding ends with the connection (the gets sent again fail below, in their order).
    const held = this.held;
    this.held = undefined;
    if (held) {
      for (const process of held.frames) {
        try {
          process();
        } catch {
          // A held frame that fits nothing: the connection is going anyway.
        }
      }
    }
    const inflight = [...this.inflight.values()].flatMap((entry) =>
      entry instanceof ReadBatch ? entry.members.map((member) => member.request) : [entry],
    );
    const waiting = [...this.run, ...this.waiting.values()].map((entry) => entry.request);
    this.inflight.clear();
    this.waiting = new Map();
    this.run = [];
    this.runPathBytes = 0;
    for (const request of inflight) request.reply(rc, undefined, inFlightReason);
    for (const request of waiting) request.reply(rc, undefined, reason);
  }

  /**
   * The ReplyHeader of a reply over `maxFrameBytes` (the rest of it is dropped unread): its
   * request fails with ZkError `ReplyTooLarge`, not retried; the watch it set stays recorded
   * (the server set it); the connection goes on. Throws ProtocolError when it answers nothing
   * in flight (a notification or a ping is never that large).
   */
  receiveOversized(header: Buffer, length: number, maxFrameBytes: number): void {
    if (this.held) {
      const copy = Buffer.from(header);
      const xid = copy.readInt32BE(0);
      if (this.holds(xid, () => this.processOversized(copy, length, maxFrameBytes))) {
        if (this.quiescing) this.checkDrained();
        return;
      }
    }
    this.processOversized(header, length, maxFrameBytes);
    if (this.quiescing) this.checkDrained();
  }

  private processOversized(header: Buffer, length: number, maxFrameBytes: number): void {
    const reader = new JuteReader(header);
    const xid = reader.int();
    const zxid = reader.long();
    const err = reader.int();
    const request = xid > 0 ? this.inflight.get(xid) : undefined;
    if (!request) {
      throw new ProtocolError(`a frame of ${length} bytes (xid ${xid}) answers no request`);
    }
    this.inflight.delete(xid);
    if (zxid > 0) this.lastZxid = zxid;
    this.heard(request.sentAt);
    if (request instanceof ReadBatch) {
      this.largestRead.note(Math.ceil(length / request.members.length), request.members.length);
      this.resendBatch(
        request,
        ZkErrorCode.ReplyTooLarge,
        `their replies together are ${length} bytes, over maxFrameBytes (${maxFrameBytes})`,
      );
      return;
    }
    this.watches.register(request, err);
    if (err !== Rc.ok) {
      request.reply(err);
      return;
    }
    request.reply(
      Rc.failedWithCause,
      undefined,
      new ZkError(
        ZkErrorCode.ReplyTooLarge,
        `the reply is ${length} bytes, over maxFrameBytes (${maxFrameBytes}): raise the client's maxFrameBytes option to read it`,
      ),
    );
  }

  /**
   * A multiRead's reply: each get answered from it — or, from a server before 3.6
   * (Unimplemented, or no results), each sent again alone.
   */
  private receiveBatch(batch: ReadBatch<PendingRequest>, reader: JuteReader, err: number): void {
    if (err === Rc.unimplemented || (err === Rc.ok && reader.remaining === 0)) {
      this.batchReads = undefined;
      this.resendBatch(batch, ZkErrorCode.Unimplemented, 'the server does not know multiRead');
      return;
    }
    if (err !== Rc.ok) {
      batch.fail(err);
      return;
    }
    this.largestRead.note(batch.answer(reader), batch.members.length);
  }

  /** One reply frame (after the ConnectResponse). Throws ProtocolError on one that fits nothing. */
  receive(frame: Buffer): void {
    if (this.held) {
      const xid = frame.readInt32BE(0);
      if (xid > 0 || xid === Xid.notification) {
        // The frame is a view of a shared read buffer: a held one is copied.
        const copy = Buffer.from(frame);
        if (this.holds(Math.max(xid, 0), () => this.process(copy))) {
          if (this.quiescing) this.checkDrained();
          return;
        }
      }
    }
    this.process(frame);
    if (this.quiescing) this.checkDrained();
  }

  private process(frame: Buffer): void {
    const reader = new JuteReader(frame);
    const xid = reader.int();
    const zxid = reader.long();
    const err = reader.int();
    if (xid > 0) {
      const request = this.inflight.get(xid);
      if (!request) throw new ProtocolError(`reply to xid ${xid}, which no request has`);
      this.inflight.delete(xid);
      if (zxid > 0) this.lastZxid = zxid;
      this.heard(request.sentAt);
      if (request instanceof ReadBatch) {
        this.receiveBatch(request, reader, err);
        return;
      }
      if (request.batchPath !== undefined) this.largestRead.note(frame.length);
      let value: unknown;
      if (err === Rc.ok && request.decode) {
        try {
          value = request.decode(reader);
        } catch (error) {
          // The caller hears of it (its reply was unreadable: applied or not, as for a lost
          // connection), then the connection drops.
          request.reply(Rc.connectionLoss, undefined, unreadableReply(error));
          throw error;
        }
      }
      this.watches.register(request, err);
      request.reply(err, value);
      return;
    }
    switch (xid) {
      case Xid.ping: {
        const sentAt = this.pingsSentAt.shift();
        if (sentAt !== undefined) this.heard(sentAt);
        return;
      }
      case Xid.notification: {
        const event = readWatcherEvent(reader);
        this.watches.consume(event.type, event.path);
        this.events.onNotification(event);
        return;
      }
      case Xid.auth:
        this.events.onAuthReply(err);
        return;
      case Xid.setWatches:
        if (this.setWatchesInFlight === 0) throw new ProtocolError('setWatches reply unasked');
        this.setWatchesInFlight -= 1;
        return;
      default:
        throw new ProtocolError(`reply with reserved xid ${xid}`);
    }
  }
}
