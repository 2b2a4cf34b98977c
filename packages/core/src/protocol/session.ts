/**
 * The session state machine of the TypeScript transport: connect (and re-attach) to the servers
 * of a connect string in turn, keep the connection alive, reconnect on the same session, and die
 * when the session expires, credentials are refused or the client closes it. Why a connection
 * was dropped or a session ended is decided here; requests go through the pipeline.
 */
import { CONFIG_NODE, type ServerAddress } from '../ensemble/ensemble-config';
import { codeOfReturnCode, Rc, ZkError, ZkErrorCode } from '../errors/errors';
import type { PathMap } from '../operations/operations';
import type {
  OperationName,
  OperationRequest,
  OperationResult,
  Reply,
  SessionCredentials,
  SessionHandle,
  SessionListener,
  SessionOptions,
  WatchEventType,
} from '../transport/transport';
import { EventType, OpCode } from '../wire/codes';
import { JuteReader } from '../wire/jute';
import {
  type ConnectResponse,
  decodeConnectResponse,
  encodeAuth,
  encodeConnectRequest,
  encodeHeaderOnly,
  sessionIdHex,
  type WatcherEvent,
} from '../wire/records';
import {
  askServer,
  type Connection,
  type Endpoint,
  formatEndpoint,
  openConnection,
  versionOf,
} from './connection';
import { EnsembleMoves } from './ensemble-moves';
import { startHeartbeat } from './heartbeat';
import { HostList, parseConnectString } from './hosts';
import { PendingRequest, RequestPipeline } from './pipeline';
import { searchReadWrite } from './read-write-search';
import { chrootPaths, submitOperation, submitRemoveWatches } from './requests';
import { saslLogin } from './sasl';

/** How long `close()` waits for the server to answer closeSession, at most. */
const CLOSE_BOUND_MS = 2_000;

/** The shortest time a connection attempt (TCP, TLS, ConnectResponse) is given. */
const MIN_ATTEMPT_MS = 1_000;

/**
 * How long a ConnectRequest's answer is waited for on a connection the server accepted, after
 * `waitsRunOut` such waits in a row ran out: a quarter of the session timeout (at least
 * MIN_ATTEMPT_MS), doubled after each, up to `attemptMs` (the session timeout over the hosts:
 * what Java's ClientCnxn gives every attempt). A server that accepts and never answers is
 * most often one starting: ZooKeeper 3.8 left a handshake made as it came up unanswered until
 * the attempt's end (1 client in 20 in 2 runs of 10 of `--scenario fleet-boot`: that member
 * joined 10 s late). So such a handshake costs a quarter of the session timeout, not all of it,
 * and a slow server still gets the whole attempt from the third try on.
 *
 * ## Example
 * ```ts
 * console.log([0, 1, 2, 3].map((runOut) => handshakeWaitMs(10_000, 10_000, runOut)));
 * // Output: [ 2500, 5000, 10000, 10000 ]
 * ```
 */
export function handshakeWaitMs(
  sessionTimeoutMs: number,
  attemptMs: number,
  waitsRunOut: number,
): number {
  const first = Math.max(MIN_ATTEMPT_MS, Math.floor(sessionTimeoutMs / 4));
  return Math.min(attemptMs, first * 2 ** Math.min(waitsRunOut, 16));
}

const NO_PASSWORD = Buffer.alloc(16);

/**
 * Where this handle is in its own lifecycle — not a `SessionState` (what `session$` reports,
 * kept by session-keeper.ts): `connecting` covers both a first connection and a reconnection
 * while the session may live (`suspended` to the client); `dead` covers every end.
 */
type HandleState = 'connecting' | 'connected' | 'closing' | 'dead';

const eventTypes: Record<number, WatchEventType | undefined> = {
  [EventType.nodeCreated]: 'created',
  [EventType.nodeDeleted]: 'deleted',
  [EventType.nodeDataChanged]: 'changed',
  [EventType.nodeChildrenChanged]: 'child',
};

/** Why a request sent before `close()` got no reply: the session closed first. */
function closedInFlight(): Error {
  return new Error('the session closed before its reply came: it may have been applied');
}

/**
 * One ZooKeeper session over the wire protocol. Requests go through a {@link RequestPipeline};
 * connections come and go underneath while the session lives.
 */
export class ProtocolSession implements SessionHandle {
  private state: HandleState = 'connecting';
  private sessionIdValue = 0n;
  private sessionHex = '0';
  private password: Buffer = NO_PASSWORD;
  private timeoutMs = -1;
  private readOnlyFlag = false;
  /** A read-write server gave this handle its session (its id is then good on any server). */
  private seenReadWrite = false;
  /** While connected read-only: the search for a read-write server. */
  private readWriteSearch: { stop(): void } | undefined;
  private readonly pipeline: RequestPipeline;
  private readonly hosts: HostList;
  /** Client paths to server paths and back (the connect string's chroot). */
  private readonly paths: PathMap;
  private readonly authFrames: Buffer[];
  /** The connection being set up or in use (any other one's events are stale). */
  private connection: Connection | undefined;
  private cancelAttempt: (() => void) | undefined;
  /** The next server being picked (host names resolving), if any. */
  private picking: Promise<unknown> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private attemptTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: { stop(): void } | undefined;
  private closing: Promise<void> | undefined;
  private attemptFailureLogged = false;
  /** Handshakes in a row whose answer did not come in time (see `handshakeWaitMs`). */
  private handshakesRunOut = 0;
  /** When the ConnectRequest of the connection being set up was queued (performance.now()). */
  private connectSentAt = 0;
  /** Following the ensemble: the list's changes, planned moves, their graces. */
  private readonly moves: EnsembleMoves;

  constructor(
    private readonly options: SessionOptions,
    private readonly listener: SessionListener,
  ) {
    const parsed = parseConnectString(options.connect);
    this.paths = chrootPaths(parsed.chroot);
    // A name's lookup gets what one connection attempt gets: a hung resolver costs the round
    // that one host, never the hosts after it.
    this.hosts = new HostList(parsed.endpoints, undefined, undefined, options.lookup, () =>
      this.attemptTimeoutMs(),
    );
    this.authFrames = options.auth.map((auth) =>
      encodeAuth(auth.scheme, Buffer.from(auth.credentials, 'utf8')),
    );
    this.pipeline = new RequestPipeline(
      {
        onNotification: (event) => this.onNotification(event),
        onAuthReply: (rc) => this.onAuthReply(rc),
      },
      options.batchReads === false ? undefined : { maxFrameBytes: options.maxFrameBytes },
    );
    this.moves = new EnsembleMoves({
      log: options.log,
      pipeline: this.pipeline,
      hosts: this.hosts,
      sessionId: () => this.sessionHex,
      current: () =>
        this.state === 'connected' && !this.readOnlyFlag ? this.connection : undefined,
      // The old connection works meanwhile: a move's connection may take longer than an attempt.
      open: (endpoint) =>
        openConnection(endpoint, {
          tls: options.tls,
          timeoutMs: Math.max(this.attemptTimeoutMs(), this.sessionTimeout() / 3),
          maxFrameBytes: options.maxFrameBytes,
        }),
      sessionTimeoutMs: () => this.sessionTimeout(),
      attemptTimeoutMs: () => this.attemptTimeoutMs(),
      reattach: (from, to, deadline) => this.reattach(from, to, deadline),
      graceOver: (what) => this.graceOver(what),
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

  get heardAt(): number {
    return this.pipeline.heardAt;
  }

  get isDead(): boolean {
    return this.state === 'dead' || this.state === 'closing';
  }

  /** The server the session is on, as the host list names it (`host:port`); undefined while not connected. */
  get server(): string | undefined {
    const endpoint = this.state === 'connected' ? this.connection?.endpoint : undefined;
    if (!endpoint) return undefined;
    const host = this.hosts.list.find((candidate) => this.hosts.names(candidate, endpoint));
    return formatEndpoint(host ?? { host: endpoint.name ?? endpoint.host, port: endpoint.port });
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
        this.handshake(
          connection,
          handshakeWaitMs(this.sessionTimeout(), timeoutMs, this.handshakesRunOut),
        );
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
        this.handshakesRunOut += 1;
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
    this.connectSentAt = connection.queuedAt;
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
      saslLogin(connection, () => this.pipeline.xid(), sasl, {
        isCurrent: () => this.connection === connection && this.state === 'connecting',
        refused: (message, rc) => {
          this.options.log.error(`SASL login as ${sasl.username} failed: ${message}`, {
            sessionId: this.sessionHex,
          });
          this.die(rc);
        },
        done: () => this.ready(connection, response, renewed),
        closed: (reason) => this.onConnectionClosed(connection, reason),
      });
      return;
    }
    this.ready(connection, response, renewed);
  }

  private ready(connection: Connection, response: ConnectResponse, renewed: boolean): void {
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    // Back within a planned move's (or a hand-off's) bound, read-write: the session never
    // looked lost. On a read-only server it did: suspended first.
    const grace = this.moves.endGrace();
    const moved = grace !== undefined && !response.readOnly;
    if (grace && !moved) this.listener.onDisconnected(this, undefined);
    this.state = 'connected';
    this.hosts.succeeded();
    this.attemptFailureLogged = false;
    this.handshakesRunOut = 0;
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
    // A read-write server's answers say the session lives on the quorum (a ConnectRequest it
    // accepted renewed it); a read-only server's say nothing of it.
    const quorumHears = !response.readOnly;
    this.pipeline.attach(connection, this.authFrames, quorumHears);
    if (quorumHears) this.pipeline.heard(this.connectSentAt);
    const current = () => this.connection === connection && this.state === 'connected';
    this.heartbeat = startHeartbeat(connection, this.sessionTimeout(), {
      isCurrent: current,
      ping: () => this.pipeline.ping(),
      heardAt: quorumHears ? () => this.pipeline.heardAt : undefined,
    });
    if (this.options.batchReads !== false) this.learnMultiRead(connection);
    if (response.readOnly) {
      this.readWriteSearch = searchReadWrite({
        others: () => this.hosts.others(connection.endpoint),
        tls: this.options.tls,
        timeoutMs: () => this.attemptTimeoutMs(),
        isWanted: current,
        found: (endpoint) => this.moveTo(connection, endpoint),
      });
    }
    if (moved) {
      if (this.listener.onMoved) this.listener.onMoved(this, grace);
      else this.listener.onConnected(this);
      return;
    }
    this.listener.onConnected(this);
  }

  /**
   * Asks the connection's server its version (`srvr`, on a connection of its own) and lets the
   * pipeline batch gets on this connection once it said 3.6 or later: a server before 3.6
   * closes the connection after answering a multiRead (read-batch.ts). Each connection asks its
   * own server (a rolling upgrade mixes versions); no answer — `srvr` not in the server's
   * `4lw.commands.whitelist` — means no batches.
   */
  private learnMultiRead(connection: Connection): void {
    void askServer(connection.endpoint, 'srvr', {
      tls: this.options.tls,
      timeoutMs: this.attemptTimeoutMs(),
    }).then((answer) => {
      const version = versionOf(answer);
      if (!version || version[0] < 3 || (version[0] === 3 && version[1] < 6)) {
        this.options.log.debug(
          `not batching reads on ${connection.describe()}: ${version ? `ZooKeeper ${version.join('.')} has no multiRead` : 'it did not say its version (srvr)'}`,
          { sessionId: this.sessionHex },
        );
        return;
      }
      if (this.connection !== connection) return;
      this.pipeline.allowBatches(connection);
      this.options.log.debug(
        `batching reads on ${connection.describe()} (ZooKeeper ${version.join('.')}: multiRead)`,
        { sessionId: this.sessionHex },
      );
    });
  }

  /** A read-write server was found while connected read-only: go there. */
  private moveTo(connection: Connection, endpoint: Endpoint): void {
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
  }

  /** Stops what runs on an established connection (heartbeat, read-write search). */
  private stopConnectionWork(): void {
    this.heartbeat?.stop();
    this.heartbeat = undefined;
    this.readWriteSearch?.stop();
    this.readWriteSearch = undefined;
  }

  private onConnectionClosed(connection: Connection, reason: ZkError): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    this.stopConnectionWork();
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
      // During a reconfiguration a server may drop every client (a leader's hand-off): the
      // session, known alive, is given the bound of a planned move to come back first.
      if (!this.moves.rideThrough(connection)) this.listener.onDisconnected(this, reason);
      this.connectNext();
      return;
    }
    this.logAttemptFailure(reason.message);
    this.attemptFailed(reason);
  }

  private onNotification(event: WatcherEvent): void {
    const type = eventTypes[event.type];
    if (!type || this.state !== 'connected') return;
    // The configuration node is never under the chroot (getConfig reads it at its own path).
    const config = event.path === CONFIG_NODE;
    if (config) this.moves.reconfiguring();
    const path = config ? CONFIG_NODE : this.paths.fromServer(event.path);
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
    this.pipeline.shutdown(rc);
    this.pipeline.watches.clear();
    this.listener.onClosed(this, rc);
  }

  private stopConnecting(): void {
    this.moves.stop();
    this.picking = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearTimeout(this.attemptTimer);
    this.attemptTimer = undefined;
    this.stopConnectionWork();
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
      this.pipeline.shutdown(Rc.closing);
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
        this.pipeline.shutdown(Rc.closing, undefined, closedInFlight());
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

  // ---- following the ensemble ----

  /** The servers to connect to from now on (the ensemble followed): see ensemble-moves.ts. */
  updateServers(servers: readonly ServerAddress[]): void {
    if (!this.isDead) this.moves.update(servers);
  }

  /**
   * A planned move's switch: the drained old connection goes (nothing in flight on it), the
   * session is reattached on `to`; if it is not back on a server by `deadline`, it is
   * suspended then, as after a lost connection. A deadline already past (a stall of ours ate
   * the bound before the switch) is a suspension now, before the ConnectRequest goes: `to` is
   * then tried as any reconnection, with an attempt's time.
   */
  private reattach(from: Connection, to: Connection, deadline: number): void {
    this.stopConnectionWork();
    this.pipeline.handOver();
    this.connection = undefined;
    this.state = 'connecting';
    from.destroy(
      new ZkError(ZkErrorCode.ConnectionLoss, `moved to ${to.describe()} (a planned move)`),
    );
    this.moves.startGrace(deadline, `the planned move to ${to.describe()}`, 'planned');
    const left = deadline - performance.now();
    this.handshake(to, left > 0 ? left : this.attemptTimeoutMs());
  }

  /** A grace ran out before the session was back on a server: it is suspended now. */
  private graceOver(what: string): void {
    if (this.state !== 'connecting') return;
    const reason = new ZkError(ZkErrorCode.ConnectionLoss, `${what} did not complete in time`);
    this.options.log.info(`connection lost: ${reason.message}`, { sessionId: this.sessionHex });
    this.listener.onDisconnected(this, reason);
  }

  // ---- calls ----

  call<N extends OperationName>(
    operation: N,
    request: OperationRequest<N>,
    reply: Reply<OperationResult<N>>,
    signal?: AbortSignal,
  ): void {
    if (this.isDead) {
      queueMicrotask(() => reply(Rc.closing));
      return;
    }
    if (operation === 'removeWatches') {
      submitRemoveWatches(
        this.pipeline,
        this.paths,
        request as OperationRequest<'removeWatches'>,
        reply as Reply<void>,
        signal,
      );
      return;
    }
    submitOperation(this.pipeline, this.paths, operation, request, reply, signal);
  }
}
