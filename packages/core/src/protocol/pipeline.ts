/**
 * The request pipeline of one session: xids, requests in flight matched with their replies, the
 * watches the server holds for the session (re-registered on every new connection with the last
 * zxid seen), and the special replies (pings, auth, setWatches, notifications).
 */
import { Rc, ZkError, ZkErrorCode } from '../errors';
import { WatchRegistration } from '../operations';
import type { Reply } from '../transport';
import { EventType, WatcherType, Xid } from './codes';
import type { Connection } from './connection';
import { JuteReader, ProtocolError } from './jute';
import { encodeSetWatches, readWatcherEvent, type WatcherEvent, type WatchLists } from './records';

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
  ) {}
}

/** What the pipeline reports to its session. */
export interface PipelineEvents {
  /** A watch notification (server path). */
  onNotification(event: WatcherEvent): void;
  /** The server answered an auth packet (0, or AuthFailed). */
  onAuthReply(rc: number): void;
}

/** Largest batch of watch paths in one setWatches (ClientCnxn's limit: 128 KiB). */
const SET_WATCHES_BATCH_BYTES = 128 * 1024;

/**
 * The watches a session holds on the server, by kind, in server paths. One-shot watches are
 * added when a read that set one succeeds and removed when their event arrives; persistent ones
 * stay until removed.
 */
export class ServerWatches {
  readonly data = new Set<string>();
  readonly exist = new Set<string>();
  readonly child = new Set<string>();
  readonly persistent = new Set<string>();
  readonly persistentRecursive = new Set<string>();

  get size(): number {
    return (
      this.data.size +
      this.exist.size +
      this.child.size +
      this.persistent.size +
      this.persistentRecursive.size
    );
  }

  /** Forgets the one-shot watches an event of `type` on `path` consumed on the server. */
  consume(type: number, path: string): void {
    switch (type) {
      case EventType.nodeCreated:
      case EventType.nodeDataChanged:
        this.data.delete(path);
        this.exist.delete(path);
        return;
      case EventType.nodeChildrenChanged:
        this.child.delete(path);
        return;
      case EventType.nodeDeleted:
        this.data.delete(path);
        this.exist.delete(path);
        this.child.delete(path);
        return;
    }
  }

  /** Records the watch a request set (or removed) on the server, by its outcome. */
  register(request: PendingRequest, rc: number): void {
    const path = request.watchPath;
    switch (request.watchRegistration) {
      case WatchRegistration.data:
        if (rc === Rc.ok) this.data.add(path);
        return;
      case WatchRegistration.exists:
        if (rc === Rc.ok) this.data.add(path);
        else if (rc === Rc.noNode) this.exist.add(path);
        return;
      case WatchRegistration.child:
        if (rc === Rc.ok) this.child.add(path);
        return;
      case WatchRegistration.persistent:
        if (rc === Rc.ok) this.persistent.add(path);
        return;
      case WatchRegistration.persistentRecursive:
        if (rc === Rc.ok) this.persistentRecursive.add(path);
        return;
      case WatchRegistration.remove:
        if (rc === Rc.ok || rc === Rc.noWatcher) this.remove(request.removes, path);
        return;
    }
  }

  private remove(type: number, path: string): void {
    const any = type === WatcherType.any;
    if (any || type === WatcherType.data) {
      this.data.delete(path);
      this.exist.delete(path);
    }
    if (any || type === WatcherType.children) this.child.delete(path);
    if (any || type === WatcherType.persistent) this.persistent.delete(path);
    if (any || type === WatcherType.persistentRecursive) this.persistentRecursive.delete(path);
  }

  clear(): void {
    this.data.clear();
    this.exist.clear();
    this.child.clear();
    this.persistent.clear();
    this.persistentRecursive.clear();
  }

  /** setWatches frames for all of them (several when there are many), relative to `zxid`. */
  setWatchesFrames(zxid: number): Buffer[] {
    const frames: Buffer[] = [];
    let batch: { [K in keyof WatchLists]: string[] } = emptyLists();
    let bytes = 0;
    const kinds: Array<[keyof WatchLists, Set<string>]> = [
      ['data', this.data],
      ['exist', this.exist],
      ['child', this.child],
      ['persistent', this.persistent],
      ['persistentRecursive', this.persistentRecursive],
    ];
    for (const [kind, paths] of kinds) {
      for (const path of paths) {
        batch[kind].push(path);
        bytes += path.length;
        if (bytes >= SET_WATCHES_BATCH_BYTES) {
          frames.push(encodeSetWatches(zxid, batch));
          batch = emptyLists();
          bytes = 0;
        }
      }
    }
    if (bytes > 0 || frames.length === 0) {
      if (Object.values(batch).some((paths) => paths.length > 0)) {
        frames.push(encodeSetWatches(zxid, batch));
      }
    }
    return frames;
  }
}

function emptyLists(): { [K in keyof WatchLists]: string[] } {
  return { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };
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
  private readonly inflight = new Map<number, PendingRequest>();
  private waiting: Waiting[] = [];
  private connection: Connection | undefined;
  private setWatchesInFlight = 0;
  /** Set once the session is over: the return code every request fails with. */
  private deadRc: number | undefined;

  constructor(private readonly events: PipelineEvents) {}

  private readonly awaitingReplies = (): number => this.inflight.size;

  /** Requests in flight or waiting. */
  get outstanding(): number {
    return this.inflight.size + this.waiting.length;
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
    if (connection && !connection.isClosed) {
      this.inflight.set(xid, request);
      connection.send(frame);
      return;
    }
    this.waiting.push({ xid, frame, request });
  }

  /**
   * A connection established a session: re-registers the watches, sends `first` (auth
   * packets), then every waiting request, all in the same write.
   */
  attach(connection: Connection, first: readonly Buffer[]): void {
    this.connection = connection;
    // A deep pipeline's replies are read in batches (connection.ts, coalescePauseMs).
    connection.awaiting = this.awaitingReplies;
    for (const frame of first) connection.send(frame);
    if (this.watches.size > 0) {
      for (const frame of this.watches.setWatchesFrames(this.lastZxid)) {
        this.setWatchesInFlight += 1;
        connection.send(frame);
      }
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const request of waiting) {
      this.inflight.set(request.xid, request.request);
      connection.send(request.frame);
    }
  }

  /**
   * Takes back a request that waits for a connection (not written yet): true if it did, and the
   * request is then forgotten without a reply. A request already written stays in flight.
   */
  withdraw(xid: number): boolean {
    const index = this.waiting.findIndex((entry) => entry.xid === xid);
    if (index === -1) return false;
    this.waiting.splice(index, 1);
    return true;
  }

  /** The session is over: everything outstanding fails, and so does every request made later. */
  shutdown(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    this.deadRc = rc;
    this.connection = undefined;
    this.failAll(rc, reason, inFlightReason);
  }

  /** The connection is gone: every request in flight and waiting fails with `rc`. */
  detach(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    this.connection = undefined;
    this.setWatchesInFlight = 0;
    this.failAll(rc, reason, inFlightReason);
  }

  /**
   * Fails everything outstanding with `rc` (ConnectionLoss, or closing when the handle dies):
   * the requests sent with `inFlightReason` (they may have been applied), those never sent with
   * `reason`. In the order they were made.
   */
  failAll(rc: number, reason?: Error, inFlightReason: Error | undefined = reason): void {
    const inflight = [...this.inflight.values()];
    const waiting = this.waiting.map((entry) => entry.request);
    this.inflight.clear();
    this.waiting = [];
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

  /** One reply frame (after the ConnectResponse). Throws ProtocolError on one that fits nothing. */
  receive(frame: Buffer): void {
    const reader = new JuteReader(frame);
    const xid = reader.int();
    const zxid = reader.long();
    const err = reader.int();
    if (xid > 0) {
      const request = this.inflight.get(xid);
      if (!request) throw new ProtocolError(`reply to xid ${xid}, which no request has`);
      this.inflight.delete(xid);
      if (zxid > 0) this.lastZxid = zxid;
      let value: unknown;
      if (err === Rc.ok && request.decode) {
        try {
          value = request.decode(reader);
        } catch (error) {
          // The caller hears of it (its reply was unreadable: applied or not, as for a lost
          // connection), then the connection drops.
          request.reply(
            Rc.connectionLoss,
            undefined,
            new ZkError(
              ZkErrorCode.MarshallingError,
              `unreadable reply: ${(error as Error).message}`,
              {
                cause: error,
              },
            ),
          );
          throw error;
        }
      }
      this.watches.register(request, err);
      request.reply(err, value);
      return;
    }
    switch (xid) {
      case Xid.ping:
        return;
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
