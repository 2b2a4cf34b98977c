/**
 * The session state machine of the TypeScript transport: connect (and re-attach) to the servers
 * of a connect string in turn, keep the connection alive with pings, notice a silent server,
 * reconnect on the same session, and die when the session expires, credentials are refused or
 * the client closes it. Why a connection was dropped or a session ended is decided here.
 */
import type { Acl } from '../acl';
import { OPEN_ACL_UNSAFE } from '../acl';
import { codeOfReturnCode, Rc, ZkError, ZkErrorCode } from '../errors';
import type { Stat } from '../stat';
import { timedReply } from '../telemetry';
import type {
  ClientInfo,
  Created,
  NodeData,
  PersistentWatchMode,
  Reply,
  SessionCredentials,
  SessionHandle,
  SessionListener,
  SessionOptions,
  TransportOp,
  TransportOpResult,
  WatchEventType,
} from '../transport';
import {
  type Connection,
  type Endpoint,
  formatEndpoint,
  openConnection,
  probeReadWrite,
} from './connection';
import { HostList, parseConnectString } from './hosts';
import { JuteReader } from './jute';
import { PendingRequest, RequestPipeline, WatchKind } from './pipeline';
import {
  AddWatchMode,
  type ConnectResponse,
  decodeConnectResponse,
  EventType,
  encodeAuth,
  encodeConnectRequest,
  encodeCreate,
  encodeHeaderOnly,
  encodeMulti,
  encodePath,
  encodePathInt,
  encodePathWatch,
  encodeSasl,
  encodeSetAcl,
  encodeSetData,
  type MultiOp,
  OpCode,
  readAcl,
  readClientInfos,
  readMultiResults,
  readStat,
  sessionIdHex,
  type WatcherEvent,
  WatcherType,
  Xid,
} from './records';
import { checkRspauth, digestResponse } from './sasl';

/** The node holding the ensemble's configuration (never under a chroot). */
const CONFIG_NODE = '/zookeeper/config';

/** The first look for a read-write server after connecting to a read-only one (then doubling). */
const READ_WRITE_PROBE_FIRST_MS = 500;
const READ_WRITE_PROBE_MAX_MS = 60_000;

/** How long `close()` waits for the server to answer closeSession, at most. */
const CLOSE_BOUND_MS = 2_000;

/** The shortest time a connection attempt (TCP, TLS, ConnectResponse) is given. */
const MIN_ATTEMPT_MS = 1_000;

const NO_PASSWORD = Buffer.alloc(16);

/** How late a heartbeat timer may run before the delay counts as this process's own stall. */
const STALL_TOLERANCE_MS = 50;

type State = 'connecting' | 'connected' | 'closing' | 'dead';

const eventTypes: Record<number, WatchEventType | undefined> = {
  [EventType.nodeCreated]: 'created',
  [EventType.nodeDeleted]: 'deleted',
  [EventType.nodeDataChanged]: 'changed',
  [EventType.nodeChildrenChanged]: 'child',
};

const readNodeData = (reader: JuteReader): NodeData => {
  const data = reader.buffer();
  return { data, stat: readStat(reader) };
};

const readChildren = (reader: JuteReader): { children: string[]; stat: Stat } => {
  const children = reader.strings();
  return { children, stat: readStat(reader) };
};

const readInt = (reader: JuteReader): number => reader.int();

function failLater<T>(reply: Reply<T>, rc: number): void {
  queueMicrotask(() => reply(rc));
}

/** Why a request sent before `close()` got no reply: the session closed first. */
function closedInFlight(): Error {
  return new Error('the session closed before its reply came: it may have been applied');
}

/**
 * One ZooKeeper session over the wire protocol. Requests go through a {@link RequestPipeline};
 * connections come and go underneath while the session lives.
 */
export class ProtocolSession implements SessionHandle {
  private state: State = 'connecting';
  private sessionIdValue = 0n;
  private sessionHex = '0';
  private password: Buffer = NO_PASSWORD;
  private timeoutMs = -1;
  private readOnlyFlag = false;
  /** A read-write server gave this handle its session (its id is then good on any server). */
  private seenReadWrite = false;
  /** While connected read-only: the next look for a read-write server. */
  private readWriteProbe: ReturnType<typeof setTimeout> | undefined;
  private readonly pipeline: RequestPipeline;
  private readonly hosts: HostList;
  private readonly chroot: string;
  private readonly authFrames: Buffer[];
  /** The connection being set up or in use (any other one's events are stale). */
  private connection: Connection | undefined;
  private cancelAttempt: (() => void) | undefined;
  /** The next server being picked (host names resolving), if any. */
  private picking: Promise<unknown> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private attemptTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  private closing: Promise<void> | undefined;
  private attemptFailureLogged = false;

  constructor(
    private readonly options: SessionOptions,
    private readonly listener: SessionListener,
  ) {
    const parsed = parseConnectString(options.connect);
    this.chroot = parsed.chroot;
    this.hosts = new HostList(parsed.endpoints, undefined, undefined, options.lookup);
    this.authFrames = options.auth.map((auth) =>
      encodeAuth(auth.scheme, Buffer.from(auth.credentials, 'utf8')),
    );
    this.pipeline = new RequestPipeline({
      onNotification: (event) => this.onNotification(event),
      onAuthReply: (rc) => this.onAuthReply(rc),
    });
    this.connectNext();
  }

  get sessionId(): string {
    return this.sessionHex;
  }

  get negotiatedTimeoutMs(): number {
    return this.timeoutMs;
  }

  get readOnly(): boolean {
    return this.readOnlyFlag;
  }

  get lastZxidSeen(): number {
    return this.pipeline.lastZxid;
  }

  get isDead(): boolean {
    return this.state === 'dead' || this.state === 'closing';
  }

  credentials(): SessionCredentials | undefined {
    if (this.isDead || this.sessionIdValue === 0n) return undefined;
    return { sessionId: this.sessionHex, password: this.password.toString('hex') };
  }

  // ---- connecting ----

  private sessionTimeout(): number {
    return this.timeoutMs > 0 ? this.timeoutMs : this.options.sessionTimeoutMs;
  }

  private attemptTimeoutMs(): number {
    return Math.max(MIN_ATTEMPT_MS, Math.floor(this.sessionTimeout() / this.hosts.size));
  }

  private connectNext(): void {
    if (this.state !== 'connecting') return;
    // Host names are resolved at the start of a round: one attempt at a time picks the next.
    const picking = this.hosts.next();
    this.picking = picking;
    picking.then(({ endpoint, delayMs }) => {
      if (this.picking !== picking) return;
      this.picking = undefined;
      if (this.state !== 'connecting') return;
      if (delayMs === 0) {
        this.tryConnect(endpoint);
        return;
      }
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.tryConnect(endpoint);
      }, delayMs);
    });
  }

  private tryConnect(endpoint: Endpoint): void {
    if (this.state !== 'connecting') return;
    const timeoutMs = this.attemptTimeoutMs();
    const attempt = openConnection(endpoint, {
      tls: this.options.tls,
      timeoutMs,
      maxFrameBytes: this.options.maxFrameBytes,
    });
    this.cancelAttempt = attempt.cancel;
    attempt.promise.then(
      (connection) => {
        this.cancelAttempt = undefined;
        if (this.state !== 'connecting') {
          connection.destroy();
          return;
        }
        this.handshake(connection, timeoutMs);
      },
      (error: unknown) => {
        this.cancelAttempt = undefined;
        if (this.state !== 'connecting') return;
        this.logAttemptFailure((error as Error).message);
        this.attemptFailed(error as Error);
      },
    );
  }

  /** The first failed attempt of a series at `warn`, the others at `debug` (no flood). */
  private logAttemptFailure(message: string): void {
    const level = this.attemptFailureLogged ? 'debug' : 'warn';
    this.attemptFailureLogged = true;
    this.options.log[level](message, { sessionId: this.sessionHex });
  }

  /** A connection attempt failed before a session was established on it. */
  private attemptFailed(reason?: Error): void {
    this.hosts.failed();
    // Requests made meanwhile fail as the Java client fails them: the caller's retry decides.
    this.pipeline.detach(Rc.connectionLoss, reason);
    this.connectNext();
  }

  private handshake(connection: Connection, timeoutMs: number): void {
    this.connection = connection;
    this.attemptTimer = setTimeout(() => {
      this.attemptTimer = undefined;
      // The answer may be in the socket, unread behind a stall of ours: look after the poll.
      setImmediate(() => {
        if (this.connection !== connection || this.state !== 'connecting') return;
        connection.destroy(
          new ZkError(
            ZkErrorCode.ConnectionLoss,
            `no session from ${connection.describe()} within ${timeoutMs} ms`,
          ),
        );
      });
    }, timeoutMs);
    connection.attach({
      onFrame: (frame) => this.onConnectResponse(connection, frame),
      onClose: (reason) => this.onConnectionClosed(connection, reason),
    });
    connection.send(
      encodeConnectRequest({
        lastZxidSeen: this.pipeline.lastZxid,
        timeOut: this.options.sessionTimeoutMs,
        // A session made by a read-only server is local to it: another server would call it
        // expired. Until a read-write server was seen, ask for a new session (ClientCnxn's
        // seenRwServerBefore does the same).
        sessionId: this.seenReadWrite ? this.sessionIdValue : 0n,
        password: this.seenReadWrite ? this.password : NO_PASSWORD,
        readOnly: this.options.canBeReadOnly,
      }),
    );
  }

  private onConnectResponse(connection: Connection, frame: Buffer): void {
    if (this.connection !== connection || this.state !== 'connecting') return;
    if (frame.length === 16) {
      // A ReplyHeader instead of a ConnectResponse: the server refused to create the session
      // (a read-only server without local sessions answers createSession NotReadOnly).
      const reader = new JuteReader(frame);
      reader.skip(12);
      const rc = reader.int();
      connection.destroy(
        new ZkError(
          codeOfReturnCode(rc),
          `${connection.describe()} refused the session: ${codeOfReturnCode(rc)} (rc ${rc})`,
          { rc },
        ),
      );
      return;
    }
    const response = decodeConnectResponse(new JuteReader(frame));
    if (response.timeOut <= 0) {
      clearTimeout(this.attemptTimer);
      this.attemptTimer = undefined;
      if (this.sessionIdValue !== 0n) {
        this.options.log.info(`session 0x${this.sessionHex} expired`, {
          server: connection.describe(),
        });
        this.die(Rc.sessionExpired);
        return;
      }
      connection.destroy(
        new ZkError(ZkErrorCode.SystemError, `${connection.describe()} refused a new session`),
      );
      return;
    }
    this.established(connection, response);
  }

  private established(connection: Connection, response: ConnectResponse): void {
    const renewed = this.sessionIdValue !== 0n;
    this.sessionIdValue = response.sessionId;
    this.sessionHex = sessionIdHex(response.sessionId);
    this.password = response.password;
    this.timeoutMs = response.timeOut;
    this.readOnlyFlag = response.readOnly;
    if (!response.readOnly) this.seenReadWrite = true;
    const sasl = this.options.sasl;
    if (sasl) {
      // Every connection logs in before any request goes out (as the Java client holds them).
      this.authenticate(connection, sasl, () => this.ready(connection, response, renewed));
      return;
    }
    this.ready(connection, response, renewed);
  }

  /**
   * SASL DIGEST-MD5 on a new connection: an empty token, the server's challenge, our response,
   * the server's rspauth (checked: the server knew the password). The server answers these at
   * once, by xid, outside the order of other requests; a refusal closes the session there.
   */
  private authenticate(
    connection: Connection,
    credentials: { readonly username: string; readonly password: string },
    done: () => void,
  ): void {
    let expectedRspauth: string | undefined;
    const send = (token: Buffer) => {
      const xid = this.pipeline.xid();
      connection.send(encodeSasl(xid, token));
    };
    const refused = (message: string, rc: number) => {
      this.options.log.error(`SASL login as ${credentials.username} failed: ${message}`, {
        sessionId: this.sessionHex,
      });
      this.die(rc);
    };
    connection.attach({
      onFrame: (frame) => {
        if (this.connection !== connection || this.state !== 'connecting') return;
        const reader = new JuteReader(frame);
        const xid = reader.int();
        reader.long();
        const err = reader.int();
        if (xid === Xid.ping || xid === Xid.notification) return;
        if (err !== Rc.ok) {
          const rc = err === Rc.sessionClosedRequireSaslAuth ? err : Rc.authFailed;
          return refused(`the server answered ${codeOfReturnCode(err)}`, rc);
        }
        const token = reader.buffer();
        if (expectedRspauth === undefined) {
          if (token.length === 0) {
            return refused('the server has no SASL login configured', Rc.authFailed);
          }
          const answer = digestResponse(token, credentials);
          expectedRspauth = answer.expectedRspauth;
          send(answer.response);
          return;
        }
        if (!checkRspauth(token, expectedRspauth)) {
          return refused('the server did not prove it knew the password (rspauth)', Rc.authFailed);
        }
        done();
      },
      onClose: (reason) => this.onConnectionClosed(connection, reason),
    });
    send(Buffer.alloc(0));
  }

  private ready(connection: Connection, response: ConnectResponse, renewed: boolean): void {
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    this.state = 'connected';
    this.hosts.succeeded();
    this.attemptFailureLogged = false;
    connection.attach({
      onFrame: (frame) => this.pipeline.receive(frame),
      onOversizedFrame: (header, length) =>
        this.pipeline.receiveOversized(header, length, this.options.maxFrameBytes),
      onClose: (reason) => this.onConnectionClosed(connection, reason),
    });
    this.options.log.info(
      `session ${renewed ? 're-established' : 'establishment complete'} on server ${connection.describe()}, sessionId=0x${this.sessionHex}, negotiated timeout=${response.timeOut}${response.readOnly ? ' (read-only)' : ''}`,
      { sessionId: this.sessionHex, server: connection.describe() },
    );
    this.pipeline.attach(connection, this.authFrames);
    this.heartbeat(connection);
    if (response.readOnly) this.lookForReadWrite(connection, READ_WRITE_PROBE_FIRST_MS);
    this.listener.onConnected(this);
  }

  /**
   * Pings when nothing was sent for a third of the session timeout; drops the connection when
   * nothing was received for two thirds of it (ClientCnxn's read timeout) — silence on the
   * server's side, not ours:
   * - Before deciding, it looks at the socket: a timer can fire before the poll phase of the
   *   same turn reads a reply that arrived while the event loop was blocked (a sync parse, a GC
   *   pause). The decision waits one `setImmediate`, which runs after that poll phase.
   * - Time the event loop spent blocked does not count as the server's silence: a tick that
   *   runs late was stalled by us, and the server could not answer a ping we did not send. The
   *   lateness is credited until the next frame arrives, and a ping goes out at once.
   * Java's ClientCnxn reads the socket before it checks the read timeout too (its send thread
   * selects, then measures); it does count a GC pause as silence, which this does not.
   */
  private heartbeat(connection: Connection): void {
    const timeout = this.sessionTimeout();
    const readTimeout = (timeout * 2) / 3;
    const pingInterval = timeout / 3;
    /** When the pending tick should run (performance.now()). */
    let due = 0;
    /** Our own stalls (ms) since the frame received at `creditFrom`. */
    let stallCredit = 0;
    let creditFrom = connection.lastReceived;
    const schedule = (delayMs: number) => {
      const delay = Math.max(1, Math.ceil(delayMs));
      due = performance.now() + delay;
      this.heartbeatTimer = setTimeout(tick, delay);
    };
    const tick = () => {
      this.heartbeatTimer = undefined;
      if (this.connection !== connection || connection.isClosed) return;
      const late = performance.now() - due;
      // A reply may be sitting unread in the socket: look after this turn's poll phase (the
      // check is stale, and does nothing, if the connection went meanwhile).
      setImmediate(() => check(late));
    };
    const check = (late: number) => {
      if (this.connection !== connection || connection.isClosed || this.state !== 'connected') {
        return;
      }
      if (connection.lastReceived !== creditFrom) {
        creditFrom = connection.lastReceived;
        stallCredit = 0;
      }
      // Timers run a little late on any busy loop; only a real stall earns credit.
      if (late > STALL_TOLERANCE_MS) stallCredit += late;
      const now = performance.now();
      const silentMs = now - connection.lastReceived - stallCredit;
      if (silentMs >= readTimeout) {
        connection.destroy(
          new ZkError(
            ZkErrorCode.ConnectionLoss,
            `no answer from ${connection.describe()} for ${Math.round(silentMs)} ms` +
              (stallCredit > 0
                ? ` (not counting ${Math.round(stallCredit)} ms this process was stalled)`
                : ''),
          ),
        );
        return;
      }
      let idleMs = now - connection.lastSent;
      if (idleMs >= pingInterval) {
        connection.send(encodeHeaderOnly(-2, OpCode.ping));
        connection.lastSent = now;
        idleMs = 0;
      }
      schedule(Math.min(readTimeout - silentMs, pingInterval - idleMs));
    };
    schedule(pingInterval);
  }

  /**
   * Connected to a read-only server: asks the other servers, one after the other, whether they
   * serve read-write (the `isro` four-letter word, which a server with read-only mode enabled
   * always answers), and moves to the first that does — the way back once the quorum is there
   * again, as ClientCnxn's pingRwServer. Looks again after `delayMs`, doubling up to a minute.
   */
  private lookForReadWrite(connection: Connection, delayMs: number): void {
    this.readWriteProbe = setTimeout(async () => {
      this.readWriteProbe = undefined;
      const current = () => this.connection === connection && this.state === 'connected';
      for (const endpoint of this.hosts.others(connection.endpoint)) {
        if (!current()) return;
        const readWrite = await probeReadWrite(endpoint, {
          tls: this.options.tls,
          timeoutMs: this.attemptTimeoutMs(),
        });
        if (!current()) return;
        if (readWrite) {
          this.options.log.info(
            `${formatEndpoint(endpoint)} serves read-write: leaving read-only ${connection.describe()}`,
            { sessionId: this.sessionHex },
          );
          this.hosts.preferNext(endpoint);
          connection.destroy(
            new ZkError(
              ZkErrorCode.ConnectionLoss,
              `moving from read-only ${connection.describe()} to read-write ${formatEndpoint(endpoint)}`,
            ),
          );
          return;
        }
      }
      if (current()) {
        this.lookForReadWrite(connection, Math.min(READ_WRITE_PROBE_MAX_MS, delayMs * 2));
      }
    }, delayMs);
  }

  private onConnectionClosed(connection: Connection, reason: ZkError): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    clearTimeout(this.readWriteProbe);
    this.readWriteProbe = undefined;
    if (this.state === 'closing' || this.state === 'dead') {
      this.pipeline.detach(Rc.closing, undefined, closedInFlight());
      return;
    }
    if (reason.code === ZkErrorCode.MarshallingError || reason.code === ZkErrorCode.SystemError) {
      this.options.log.warn(`dropped the connection: ${reason.message}`, {
        sessionId: this.sessionHex,
      });
    }
    if (this.state === 'connected') {
      this.state = 'connecting';
      this.options.log.info(`connection lost: ${reason.message}`, { sessionId: this.sessionHex });
      this.pipeline.detach(Rc.connectionLoss, reason);
      this.hosts.lost();
      this.listener.onDisconnected(this, reason);
      this.connectNext();
      return;
    }
    this.logAttemptFailure(reason.message);
    this.attemptFailed(reason);
  }

  private onNotification(event: WatcherEvent): void {
    const type = eventTypes[event.type];
    if (!type || this.state !== 'connected') return;
    const path = this.fromServer(event.path);
    if (path === undefined) return;
    this.listener.onWatchEvent(this, type, path);
  }

  private onAuthReply(rc: number): void {
    if (rc === Rc.ok) return;
    if (rc === Rc.authFailed) {
      this.options.log.error('ZooKeeper refused the credentials', { sessionId: this.sessionHex });
      this.die(Rc.authFailed);
      return;
    }
    this.options.log.warn('an auth packet failed', { rc, sessionId: this.sessionHex });
  }

  /** The handle is dead for good: everything outstanding fails with `rc`, the owner hears it. */
  private die(rc: number): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.stopConnecting();
    const connection = this.connection;
    this.connection = undefined;
    connection?.destroy();
    this.pipeline.failAll(rc);
    this.pipeline.watches.clear();
    this.listener.onClosed(this, rc);
  }

  private stopConnecting(): void {
    this.picking = undefined;
    clearTimeout(this.readWriteProbe);
    this.readWriteProbe = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.cancelAttempt?.();
    this.cancelAttempt = undefined;
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    const connection = this.state === 'connected' ? this.connection : undefined;
    this.stopConnecting();
    if (!connection) {
      this.state = 'dead';
      const pending = this.connection;
      this.connection = undefined;
      pending?.destroy();
      this.pipeline.failAll(Rc.closing);
      this.closing = Promise.resolve();
      return this.closing;
    }
    this.state = 'closing';
    this.closing = new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = () => {
        clearTimeout(timer);
        this.state = 'dead';
        if (this.connection === connection) this.connection = undefined;
        connection.destroy();
        this.pipeline.failAll(Rc.closing, undefined, closedInFlight());
        resolve();
      };
      timer = setTimeout(finish, Math.min(CLOSE_BOUND_MS, this.sessionTimeout()));
      const xid = this.pipeline.xid();
      this.pipeline.submit(
        xid,
        encodeHeaderOnly(xid, OpCode.closeSession),
        new PendingRequest(undefined, finish),
      );
    });
    return this.closing;
  }

  // ---- paths ----

  private toServer(path: string): string {
    if (this.chroot === '') return path;
    return path === '/' ? this.chroot : this.chroot + path;
  }

  /** The client's path of a server path; undefined for one outside the chroot. */
  private fromServer(path: string): string | undefined {
    const chroot = this.chroot;
    if (chroot === '') return path;
    if (path === chroot) return '/';
    if (path.startsWith(chroot) && path.charCodeAt(chroot.length) === 47) {
      return path.slice(chroot.length);
    }
    return undefined;
  }

  private readonly readCreated = (reader: JuteReader): Created => {
    const path = reader.ustring();
    return { path: this.fromServer(path) ?? path, stat: readStat(reader) };
  };

  // ---- calls ----

  /** Every request goes out here; `operation` is its ZooKeeper name (`db.operation.name`). */
  private send(
    operation: string,
    reply: Reply<never>,
    encode: (xid: number) => Buffer,
    decode: ((reader: JuteReader) => unknown) | undefined,
    watchKind: number = WatchKind.none,
    watchPath = '',
    removes = 0,
  ): void {
    if (this.isDead) return failLater(reply, Rc.closing);
    const xid = this.pipeline.xid();
    const frame = encode(xid);
    this.pipeline.submit(
      xid,
      frame,
      new PendingRequest(
        decode,
        timedReply(operation, reply as Reply<unknown>),
        watchKind,
        watchPath,
        removes,
      ),
    );
  }

  create(
    path: string,
    data: Buffer,
    flags: number,
    ttlMs: number,
    acl: readonly Acl[] | undefined,
    reply: Reply<Created>,
  ): void {
    const serverPath = this.toServer(path);
    this.send(
      'create',
      reply,
      (xid) => encodeCreate(xid, serverPath, data, acl ?? OPEN_ACL_UNSAFE, flags, ttlMs),
      this.readCreated,
    );
  }

  get(path: string, watch: boolean, reply: Reply<NodeData>): void {
    const serverPath = this.toServer(path);
    this.send(
      'getData',
      reply,
      (xid) => encodePathWatch(xid, OpCode.getData, serverPath, watch),
      readNodeData,
      watch ? WatchKind.data : WatchKind.none,
      serverPath,
    );
  }

  exists(path: string, watch: boolean, reply: Reply<Stat>): void {
    const serverPath = this.toServer(path);
    this.send(
      'exists',
      reply,
      (xid) => encodePathWatch(xid, OpCode.exists, serverPath, watch),
      readStat,
      watch ? WatchKind.exists : WatchKind.none,
      serverPath,
    );
  }

  children(path: string, watch: boolean, reply: Reply<{ children: string[]; stat: Stat }>): void {
    const serverPath = this.toServer(path);
    this.send(
      'getChildren',
      reply,
      (xid) => encodePathWatch(xid, OpCode.getChildren2, serverPath, watch),
      readChildren,
      watch ? WatchKind.child : WatchKind.none,
      serverPath,
    );
  }

  set(path: string, data: Buffer, version: number, reply: Reply<Stat>): void {
    const serverPath = this.toServer(path);
    this.send('setData', reply, (xid) => encodeSetData(xid, serverPath, data, version), readStat);
  }

  delete(path: string, version: number, reply: Reply<void>): void {
    const serverPath = this.toServer(path);
    this.send(
      'delete',
      reply,
      (xid) => encodePathInt(xid, OpCode.delete, serverPath, version),
      undefined,
    );
  }

  sync(path: string, reply: Reply<void>): void {
    const serverPath = this.toServer(path);
    this.send('sync', reply, (xid) => encodePath(xid, OpCode.sync, serverPath), undefined);
  }

  getAcl(path: string, reply: Reply<{ acl: Acl[]; stat: Stat }>): void {
    const serverPath = this.toServer(path);
    this.send(
      'getACL',
      reply,
      (xid) => encodePath(xid, OpCode.getACL, serverPath),
      (reader) => {
        const acl = readAcl(reader);
        return { acl, stat: readStat(reader) };
      },
    );
  }

  setAcl(path: string, version: number, acl: readonly Acl[], reply: Reply<Stat | undefined>): void {
    const serverPath = this.toServer(path);
    this.send('setACL', reply, (xid) => encodeSetAcl(xid, serverPath, acl, version), readStat);
  }

  multi(ops: readonly TransportOp[], reply: Reply<TransportOpResult[]>): void {
    const serverOps: MultiOp[] = ops.map((op) => {
      const path = this.toServer(op.path);
      switch (op.type) {
        case 'create':
          return {
            type: 'create',
            path,
            data: op.data,
            acl: op.acl ?? OPEN_ACL_UNSAFE,
            flags: op.flags,
            ttlMs: op.ttlMs,
          };
        case 'set':
          return { type: 'set', path, data: op.data, version: op.version };
        default:
          return { type: op.type, path, version: op.version };
      }
    });
    this.send(
      'multi',
      reply,
      (xid) => encodeMulti(xid, serverOps),
      (reader) =>
        readMultiResults(reader).map((result) =>
          result.type === 'create'
            ? { ...result, path: this.fromServer(result.path) ?? result.path }
            : result,
        ),
    );
  }

  getAllChildrenNumber(path: string, reply: Reply<number>): void {
    const serverPath = this.toServer(path);
    this.send(
      'getAllChildrenNumber',
      reply,
      (xid) => encodePath(xid, OpCode.getAllChildrenNumber, serverPath),
      readInt,
    );
  }

  getEphemerals(prefix: string, reply: Reply<string[]>): void {
    const serverPrefix = this.toServer(prefix);
    this.send(
      'getEphemerals',
      reply,
      (xid) => encodePath(xid, OpCode.getEphemerals, serverPrefix),
      (reader) => {
        const paths: string[] = [];
        for (const path of reader.strings()) {
          const own = this.fromServer(path);
          if (own !== undefined) paths.push(own);
        }
        return paths;
      },
    );
  }

  whoAmI(reply: Reply<ClientInfo[]>): void {
    this.send('whoAmI', reply, (xid) => encodeHeaderOnly(xid, OpCode.whoAmI), readClientInfos);
  }

  getConfig(watch: boolean, reply: Reply<NodeData>): void {
    this.send(
      'getData',
      reply,
      (xid) => encodePathWatch(xid, OpCode.getData, CONFIG_NODE, watch),
      readNodeData,
      watch ? WatchKind.data : WatchKind.none,
      CONFIG_NODE,
    );
  }

  addWatch(path: string, mode: PersistentWatchMode, reply: Reply<void>): void {
    const serverPath = this.toServer(path);
    const recursive = mode === 'persistent-recursive';
    this.send(
      'addWatch',
      reply,
      (xid) =>
        encodePathInt(
          xid,
          OpCode.addWatch,
          serverPath,
          recursive ? AddWatchMode.persistentRecursive : AddWatchMode.persistent,
        ),
      undefined,
      recursive ? WatchKind.persistentRecursive : WatchKind.persistent,
      serverPath,
    );
  }

  removeWatches(path: string, type: number, reply: Reply<void>): void {
    const serverPath = this.toServer(path);
    const persistent = type === WatcherType.persistent || type === WatcherType.persistentRecursive;
    const done: Reply<void> = !persistent
      ? reply
      : (rc, value, cause) => {
          // ZooKeeper 3.8 and older know no persistent watcher type here (MarshallingError) and
          // remove a persistent watch only as part of "any" (every watch of the session on the
          // path): done so when the session has no other watch there.
          const watches = this.pipeline.watches;
          const alone =
            !watches.data.has(serverPath) &&
            !watches.exist.has(serverPath) &&
            !watches.child.has(serverPath) &&
            (type === WatcherType.persistent
              ? !watches.persistentRecursive.has(serverPath)
              : !watches.persistent.has(serverPath));
          const refused = rc === Rc.noWatcher || rc === Rc.marshallingError;
          if (!refused || !alone || this.isDead) return reply(rc, value, cause);
          this.sendRemoveWatches(serverPath, WatcherType.any, reply);
        };
    this.sendRemoveWatches(serverPath, type, done);
  }

  private sendRemoveWatches(serverPath: string, type: number, reply: Reply<void>): void {
    this.send(
      'removeWatches',
      reply,
      (xid) => encodePathInt(xid, OpCode.removeWatches, serverPath, type),
      undefined,
      WatchKind.remove,
      serverPath,
      type,
    );
  }
}
