/**
 * ZkClient: one ZooKeeper session (renewed by itself after expiry), its state as `session$`,
 * its operations as cold observables and promises, and its watch streams — over a transport.
 */
import { BehaviorSubject, distinctUntilChanged, filter, map, Observable } from 'rxjs';
import { type Acl, OPEN_ACL_UNSAFE } from './acl';
import {
  type ResolvedClientOptions,
  resolveClientOptions,
  type ZkClientOptions,
} from './client-options';
import {
  bad,
  type CreateOptions,
  type CreateRequest,
  checkRequestSize,
  createHeaderBytes,
  type MkdirpOptions,
  resolveCreate,
  validateAcl,
  validateVersion,
} from './create-options';
import { errorFromRc, Rc, ZkError, ZkErrorCode } from './errors';
import { type Logger, leveledLogger } from './logger';
import { parentOf, toDataBuffer, validatePath, type ZkData } from './paths';
import { CreateFlag } from './protocol/records';
import { protocolTransport } from './protocol/transport';
import {
  isConnectedState,
  isTerminalState,
  type SessionEvent,
  type SessionState,
} from './session-state';
import type { Stat } from './stat';
import { coreTelemetry } from './telemetry';
import {
  resolveTransaction,
  type TransactionOp,
  type TransactionResult,
  transactionOutcome,
} from './transaction';
import type {
  ClientInfo,
  Created,
  NodeData,
  SessionCredentials,
  SessionHandle,
  SessionListener,
  Transport,
  WatchEventType,
} from './transport';
import { WatchRegistry } from './watch-registry';
import { type TreeEvent, TreeWatches } from './watch-tree';

/** A node's children names (sorted) and its metadata, as `childrenWithStat` returns them. */
export interface ChildrenWithStat {
  readonly children: string[];
  readonly stat: Stat;
}

/** The client's operations as promises (what `fs.promises` is to `fs`). */
export interface ZkPromises {
  create(path: string, data?: ZkData, options?: CreateOptions): Promise<Created>;
  get(path: string): Promise<NodeData>;
  set(path: string, data: ZkData, version?: number): Promise<Stat>;
  delete(path: string, version?: number): Promise<void>;
  exists(path: string): Promise<Stat | null>;
  children(path: string): Promise<string[]>;
  childrenWithStat(path: string): Promise<ChildrenWithStat>;
  mkdirp(path: string, options?: MkdirpOptions): Promise<void>;
  sync(path: string): Promise<void>;
  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }>;
  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<void>;
  multi(ops: readonly TransactionOp[]): Promise<TransactionResult[]>;
  getAllChildrenNumber(path: string): Promise<number>;
  getEphemerals(prefix?: string): Promise<string[]>;
  whoAmI(): Promise<ClientInfo[]>;
  getConfig(): Promise<NodeData>;
}

// Operations the native transport lacks: its Unimplemented names the default transport.
const transportFeatures = new Set([
  'multi',
  'getAllChildrenNumber',
  'getEphemerals',
  'whoAmI',
  'getConfig',
]);

/** How many times `mkdirp` walks the path again after a parent vanished under it. */
const MKDIRP_ATTEMPTS = 10;

interface PendingCall {
  /** Sent, its reply awaited: `close()` lets it end with the server's answer. */
  inFlight: boolean;
  /** Fails it now with ClientClosed (it was not sent, or its retry would be). */
  cancel(): void;
}

/** A cold observable of one call: runs it on subscribe, ignores its result after unsubscribe. */
function cold<T>(start: () => Promise<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    let active = true;
    start().then(
      (value) => {
        if (!active) return;
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        if (active) subscriber.error(error);
      },
    );
    return () => {
      active = false;
    };
  });
}

/**
 * A ZooKeeper client whose session, operations and watches are observables. Create it with
 * {@link createClient}.
 */
export class ZkClient {
  /** The connect string the client was created with. */
  readonly connectString: string;
  /**
   * The session's state: replays the latest `{ state, sessionId }` to each subscriber, then
   * every change; completes when the client is closed.
   */
  readonly session$: Observable<SessionEvent>;
  /** The operations as promises. */
  readonly promises: ZkPromises;

  private readonly options: ResolvedClientOptions;
  private readonly transport: Transport;
  private readonly log: Required<Logger>;
  private readonly sessionSubject: BehaviorSubject<SessionEvent>;
  private readonly watches: WatchRegistry;
  private readonly trees: TreeWatches;
  private readonly pending = new Set<PendingCall>();
  private readonly tracked = new Set<Promise<unknown>>();
  private handle: SessionHandle | undefined;
  private connectedOnHandle = false;
  private hadSession = false;
  /** True once the session is being torn down (after `close()` waited for tracked work). */
  private tornDown = false;
  private closePromise: Promise<void> | undefined;
  private readonly listener: SessionListener;
  /** The connect string's chroot (`''` without one): the server sees it before every path. */
  private readonly chroot: string;

  constructor(options: ZkClientOptions) {
    this.options = resolveClientOptions(options);
    this.transport = this.options.transport ?? protocolTransport();
    this.connectString = this.options.connect;
    const slash = this.connectString.indexOf('/');
    this.chroot =
      slash === -1 || this.connectString.length === slash + 1
        ? ''
        : this.connectString.slice(slash);
    this.log = leveledLogger(this.options.logger, this.options.logLevel);
    this.sessionSubject = new BehaviorSubject<SessionEvent>({
      state: 'connecting',
      sessionId: undefined,
    });
    this.session$ = this.sessionSubject.asObservable();
    const host = {
      currentHandle: () => this.handle,
      whenConnected: (callback: () => void) => this.whenConnected(callback),
      isClosed: () => this.tornDown,
    };
    this.watches = new WatchRegistry(host);
    this.trees = new TreeWatches({
      ...host,
      transportName: () => this.transport.name,
      childrenWithStat: (path) => this.promises.childrenWithStat(path),
    });
    this.listener = {
      onConnected: (handle) => this.onConnected(handle),
      onDisconnected: (handle) => this.onDisconnected(handle),
      onClosed: (handle, rc) => this.onHandleClosed(handle, rc),
      onWatchEvent: (handle, type, path) => this.onWatchEvent(handle, type, path),
    };
    this.promises = {
      create: (path, data, options) => this.runCreate(path, data, options),
      get: (path) => this.runGet(path),
      set: (path, data, version) => this.runSet(path, data, version),
      delete: (path, version) => this.runDelete(path, version),
      exists: (path) => this.runExists(path),
      children: (path) => this.runChildren(path, true),
      childrenWithStat: (path) => this.runChildren(path, false),
      mkdirp: (path, options) => this.runMkdirp(path, options),
      sync: (path) => this.runSync(path),
      getAcl: (path) => this.runGetAcl(path),
      setAcl: (path, acl, version) => this.runSetAcl(path, acl, version),
      multi: (ops) => this.runMulti(ops),
      getAllChildrenNumber: (path) => this.runGetAllChildrenNumber(path),
      getEphemerals: (prefix) => this.runGetEphemerals(prefix),
      whoAmI: () => this.runWhoAmI(),
      getConfig: () => this.runGetConfig(),
    };
    this.openHandle();
  }

  /** The current session state. */
  get state(): SessionState {
    return this.sessionSubject.value.state;
  }

  /** The current session id (hex), once connected. */
  get sessionId(): string | undefined {
    return this.sessionSubject.value.sessionId;
  }

  /** True once `close()` has been called. */
  get isClosed(): boolean {
    return this.tornDown || this.closePromise !== undefined;
  }

  /** The session's negotiated timeout (ms), or the requested one before the first connection. */
  get sessionTimeoutMs(): number {
    const negotiated = this.handle?.negotiatedTimeoutMs ?? -1;
    return negotiated > 0 ? negotiated : this.options.sessionTimeoutMs;
  }

  /** True while connected to a read-only server (only with `canBeReadOnly`). */
  get readOnly(): boolean {
    return this.handle?.readOnly ?? false;
  }

  /** The transport's name: `typescript` (the default) or `native`. */
  get transportName(): string {
    return this.transport.name;
  }

  /** The current session's id and password (hex), e.g. for `@zkrx/testing`'s `expireSession`. */
  sessionCredentials(): SessionCredentials | undefined {
    return isConnectedState(this.state) || this.state === 'suspended'
      ? this.handle?.credentials()
      : undefined;
  }

  /**
   * Resolves once the client is connected; rejects with ZkError `ConnectTimeout` after
   * `connectTimeoutMs`, or `ClientClosed`/`AuthFailed` when it never can be.
   *
   * ## Example
   * ```ts
   * const client = createClient({ connect: '127.0.0.1:2181' });
   * await client.connected();
   * console.log(client.state);
   * // Output: connected
   * ```
   */
  connected(timeoutMs: number = this.options.connectTimeoutMs): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.untilConnected(timeoutMs, 'connected', (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Calls `done` once connected (no error), or with ConnectTimeout after `timeoutMs`,
   * AuthFailed, or ClientClosed; returns a cancel function.
   */
  private untilConnected(
    timeoutMs: number,
    operation: string,
    done: (error?: ZkError) => void,
  ): () => void {
    if (isConnectedState(this.sessionSubject.value.state)) {
      done();
      return () => {};
    }
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Declared before subscribing: a finished session$ (closed, auth-failed) calls `finish`
    // synchronously inside `subscribe`, before the subscription could be assigned.
    let subscription: { unsubscribe(): void } | undefined;
    const finish = (error?: ZkError) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
      done(error);
    };
    timer = setTimeout(
      () =>
        finish(
          new ZkError(
            ZkErrorCode.ConnectTimeout,
            `${operation}: no connection to ZooKeeper at ${this.connectString} within ${Math.round(timeoutMs)} ms`,
          ),
        ),
      Math.max(0, timeoutMs),
    );
    subscription = this.sessionSubject.subscribe({
      next: (event) => {
        if (isConnectedState(event.state)) finish();
        else if (event.state === 'auth-failed') {
          finish(new ZkError(ZkErrorCode.AuthFailed, 'ZooKeeper refused the credentials'));
        } else if (event.state === 'closed') finish(this.closedError(operation));
      },
      complete: () => finish(this.closedError(operation)),
    });
    if (finished) subscription.unsubscribe();
    return () => {
      finished = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
    };
  }

  /** Creates a node. */
  create(path: string, data?: ZkData, options?: CreateOptions): Observable<Created> {
    return cold(() => this.runCreate(path, data, options));
  }

  /** Reads a node's data and metadata. */
  get(path: string): Observable<NodeData> {
    return cold(() => this.runGet(path));
  }

  /** Writes a node's data (if `version` is given, only when the node is at that version). */
  set(path: string, data: ZkData, version?: number): Observable<Stat> {
    return cold(() => this.runSet(path, data, version));
  }

  /** Deletes a node (if `version` is given, only when the node is at that version). */
  delete(path: string, version?: number): Observable<void> {
    return cold(() => this.runDelete(path, version));
  }

  /** A node's metadata, or `null` when it does not exist. */
  exists(path: string): Observable<Stat | null> {
    return cold(() => this.runExists(path));
  }

  /** A node's children names, sorted. */
  children(path: string): Observable<string[]> {
    return cold(() => this.runChildren(path, true));
  }

  /** A node's children names (sorted) and its Stat, in one round trip. */
  childrenWithStat(path: string): Observable<ChildrenWithStat> {
    return cold(() => this.runChildren(path, false));
  }

  /** Creates a path and every missing parent (existing nodes are fine). */
  mkdirp(path: string, options?: MkdirpOptions): Observable<void> {
    return cold(() => this.runMkdirp(path, options));
  }

  /** Waits until the server this client talks to has caught up with the leader for `path`. */
  sync(path: string): Observable<void> {
    return cold(() => this.runSync(path));
  }

  /** A node's ACL and metadata (the observable twin of `promises.getAcl`). */
  getAcl(path: string): Observable<{ acl: Acl[]; stat: Stat }> {
    return cold(() => this.runGetAcl(path));
  }

  /** Replaces a node's ACL (if `version` is given, only when the ACL is at that version). */
  setAcl(path: string, acl: readonly Acl[], version?: number): Observable<void> {
    return cold(() => this.runSetAcl(path, acl, version));
  }

  /**
   * Runs ops as one transaction: all are applied, or none. Fails with the ZkError of the op
   * that failed (its `code`, `path` and `opIndex`). Never retried (the ops are writes).
   *
   * ## Example
   * ```ts
   * const results = await firstValueFrom(
   *   client.multi([op.create('/a', 'x'), op.set('/b', 'y', 2), op.delete('/c')]),
   * );
   * console.log(results.map((result) => result.type));
   * // Output: [ 'create', 'set', 'delete' ]
   * ```
   */
  multi(ops: readonly TransactionOp[]): Observable<TransactionResult[]> {
    return cold(() => this.runMulti(ops));
  }

  /** The number of nodes under `path`, at every depth (ZooKeeper 3.6+). */
  getAllChildrenNumber(path: string): Observable<number> {
    return cold(() => this.runGetAllChildrenNumber(path));
  }

  /** The session's ephemeral nodes whose paths start with `prefix` (default `/`), sorted. */
  getEphemerals(prefix?: string): Observable<string[]> {
    return cold(() => this.runGetEphemerals(prefix));
  }

  /** Who the server takes this session for: one entry per authentication (ZooKeeper 3.9+). */
  whoAmI(): Observable<ClientInfo[]> {
    return cold(() => this.runWhoAmI());
  }

  /** The ensemble's configuration (`/zookeeper/config`): its data and Stat. */
  getConfig(): Observable<NodeData> {
    return cold(() => this.runGetConfig());
  }

  /**
   * A node's data: emits `{ data, stat }` at once (or `null` while the node is absent), then
   * every change. Subscribers of one path share one ZooKeeper watch; survives reconnects and
   * session expiry (re-read on the new session).
   *
   * ## Example
   * ```ts
   * client.watchData('/config/feature').subscribe((node) => console.log(node?.data.toString() ?? 'absent'));
   * await client.promises.set('/config/feature', 'on');
   * // Output: off
   * //         on
   * ```
   *
   * @param path The node to watch.
   * @return A hot-on-subscribe stream of the node's data.
   */
  watchData(path: string): Observable<NodeData | null> {
    return this.watchOf('data', path);
  }

  /** A node's children names, sorted: emits at once, then every change (`[]` while absent). */
  watchChildren(path: string): Observable<readonly string[]> {
    return this.watchOf('children', path);
  }

  /** A node's metadata: emits at once (`null` while absent), then every creation, change, deletion. */
  watchExists(path: string): Observable<Stat | null> {
    return this.watchOf('exists', path);
  }

  /**
   * Every create, delete and data change of `path` and of every node under it, from one
   * persistent recursive watch (ZooKeeper 3.6+, default transport) shared by all subscribers.
   * Emits `{ type: 'resync', reason: 'started' }` once the watch is in place and the tree has
   * been read (the content it had then is not reported). After a reconnection or a new session
   * it emits a `resync` (`'reconnected'`, `'expired'`), then every change made meanwhile, found
   * by reading the tree again (deletions deepest first, creations, data changes; a node deleted
   * and created again is `deleted` then `created`; changes collapse: a node created and deleted
   * meanwhile is not reported), then the changes since. At least once: a rare change can be
   * reported twice, none is lost. Holds ~220 bytes a node (see the README).
   *
   * ## Example
   * ```ts
   * const tree = client.watchTree('/app');
   * tree.subscribe((event) => console.log(event.type, event.path));
   * await firstValueFrom(tree); // the `resync` (started): from here on every change is reported
   * await client.promises.create('/app/a', 'x');
   * await client.promises.set('/app/a', 'y');
   * await client.promises.delete('/app/a');
   * // Output: resync /app
   * //         created /app/a
   * //         changed /app/a
   * //         deleted /app/a
   * ```
   *
   * @param path The root of the tree to watch.
   * @return A stream of the tree's changes.
   */
  watchTree(path: string): Observable<TreeEvent> {
    return new Observable<TreeEvent>((subscriber) => {
      try {
        validatePath(path);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      return this.trees.watch(path).subscribe(subscriber);
    });
  }

  /**
   * Keeps `close()` waiting for `work` (bounded by `closeTimeoutMs`): recipes track the lease
   * releases they start from synchronous teardowns this way.
   */
  track(work: Promise<unknown>): void {
    if (this.tornDown) return;
    this.tracked.add(work);
    const forget = () => this.tracked.delete(work);
    work.then(forget, forget);
  }

  /**
   * Closes the session: waits for tracked work (at most `closeTimeoutMs`), closes the session
   * (its ephemeral nodes go with it), fails every pending call with ZkError `ClientClosed` and
   * completes every stream. Safe to call twice; no call after it reaches the server. Never
   * blocks the event loop: resolves when the server confirmed the close, or after a bound.
   */
  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.closePromise = this.shutdown();
    return this.closePromise;
  }

  /** `await using client = createClient(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async shutdown(): Promise<void> {
    // Tracked work (lease releases) can only finish while connected; closing the session
    // removes our ephemeral nodes anyway, so never wait on a connection that is down.
    if (this.tracked.size > 0 && isConnectedState(this.state)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let subscription: { unsubscribe(): void } | undefined;
      await Promise.race([
        Promise.allSettled([...this.tracked]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.options.closeTimeoutMs);
          subscription = this.sessionSubject.subscribe(({ state }) => {
            if (!isConnectedState(state)) resolve();
          });
        }),
      ]);
      clearTimeout(timer);
      subscription?.unsubscribe();
    }
    this.tornDown = true;
    // A call waiting (for a connection, for its retry) fails now: it never reaches the server.
    // A call in flight gets its reply: the server answers it before it closes the session, and
    // the promise then agrees with what the server did.
    for (const call of [...this.pending]) {
      if (call.inFlight) continue;
      call.cancel();
      this.pending.delete(call);
    }
    // Say 'closed' before the session goes: whatever holds a lock or leadership stops its work
    // while its ephemeral nodes still exist, so no successor can start before it has stopped.
    this.setState('closed', this.sessionId);
    const handle = this.handle;
    this.handle = undefined;
    // The session and its ephemeral nodes are gone once this resolves (when it was connected).
    await handle?.close();
    this.watches.close();
    this.trees.close();
    this.sessionSubject.complete();
  }

  // ---- session lifecycle ----

  private openHandle(): void {
    if (this.tornDown) return;
    this.connectedOnHandle = false;
    this.handle = this.transport.open(
      {
        connect: this.options.connect,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        connectTimeoutMs: this.options.connectTimeoutMs,
        auth: this.options.auth,
        sasl: this.options.sasl,
        tls: this.options.tls,
        canBeReadOnly: this.options.canBeReadOnly,
        maxFrameBytes: this.options.maxFrameBytes,
        lookup: this.options.lookup,
        log: this.log,
        logLevel: this.options.logger ? this.options.logLevel : 'silent',
      },
      this.listener,
    );
    if (this.state !== 'connecting') this.setState('connecting', undefined);
  }

  private setState(state: SessionState, sessionId: string | undefined): void {
    const current = this.sessionSubject.value;
    if (isTerminalState(current.state)) return;
    this.log.debug(`session ${state}`, { sessionId });
    const telemetry = coreTelemetry();
    telemetry.sessionStateChanges.add(1, telemetry.stateAttributes(state));
    this.sessionSubject.next({ state, sessionId });
  }

  private onConnected(handle: SessionHandle): void {
    if (handle !== this.handle || this.tornDown) return;
    // A handle's session id changes only when a read-only (local) session moves to a read-write
    // server, which starts a session of its own: for the client that is a new session.
    const newSession = this.connectedOnHandle && handle.sessionId !== this.sessionId;
    if (!this.connectedOnHandle || newSession) {
      this.connectedOnHandle = true;
      const renewed = this.hadSession;
      this.hadSession = true;
      this.setState('connected', handle.sessionId);
      if (renewed) {
        this.watches.resync();
        this.trees.onNewSession();
      }
    } else {
      this.setState('reconnected', handle.sessionId);
      this.trees.onReconnected();
    }
  }

  private onDisconnected(handle: SessionHandle): void {
    if (handle !== this.handle || this.tornDown) return;
    if (!this.connectedOnHandle || this.state === 'suspended') return;
    // The session lives on the server until it says otherwise: ZooKeeper decides expiry, and
    // after a quorum loss the new leader restarts every session's clock. So the client stays
    // `suspended`, reconnecting, until it is `reconnected` or the server answers "expired" —
    // as Apache's Java client (3.8) does. Holders follow `suspended` (the recipes' default
    // gives up at once; `onSuspended: 'continue'` gives up after a session timeout of it).
    this.setState('suspended', handle.sessionId);
  }

  private onHandleClosed(handle: SessionHandle, rc: number): void {
    if (handle !== this.handle || this.tornDown) return;
    if (rc === Rc.authFailed || rc === Rc.invalidCallback) {
      this.handle = undefined;
      this.setState('auth-failed', this.sessionId);
      this.log.error('ZooKeeper refused the credentials: the client is closed');
      void this.close();
      return;
    }
    this.expire(handle);
  }

  /** The server said the session is gone: a new one starts. */
  private expire(handle: SessionHandle): void {
    // The session's id as session$ last reported it: when the server said "expired", the
    // handle's own id may already read '0'.
    const sessionId = this.sessionId;
    this.handle = undefined;
    void handle.close();
    this.setState('expired', sessionId);
    this.openHandle();
  }

  /**
   * A watch event, delivered in wire order: a reply read before it resolved its promise at once
   * (its continuation is queued then), so the event waits one microtask, queued now, behind it.
   * A cache that reads a snapshot and then applies events never applies an event older than
   * its snapshot. (The watch streams' own reads are delivered the same way: `inWireOrder`.)
   */
  private onWatchEvent(handle: SessionHandle, type: WatchEventType, path: string): void {
    queueMicrotask(() => {
      if (handle !== this.handle) return;
      this.watches.onEvent(type, path);
      this.trees.onEvent(type, path);
    });
  }

  private whenConnected(callback: () => void): () => void {
    let cancelled = false;
    if (isConnectedState(this.state)) {
      // Connected, yet the call failed: give the transport a moment rather than spin.
      const timer = setTimeout(() => {
        if (!cancelled) callback();
      }, 20);
      return () => {
        cancelled = true;
        clearTimeout(timer);
      };
    }
    const subscription = this.sessionSubject
      .pipe(
        map((event) => event.state),
        distinctUntilChanged(),
        filter((state) => isConnectedState(state)),
      )
      .subscribe(() => {
        subscription.unsubscribe();
        if (!cancelled) callback();
      });
    return () => {
      cancelled = true;
      subscription.unsubscribe();
    };
  }

  private watchOf<K extends 'data' | 'exists' | 'children'>(kind: K, path: string) {
    return new Observable<
      K extends 'data' ? NodeData | null : K extends 'exists' ? Stat | null : readonly string[]
    >((subscriber) => {
      try {
        validatePath(path);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      return this.watches.watch(kind, path).subscribe(subscriber as never);
    });
  }

  // ---- calls ----

  private closedError(operation: string, path?: string, cause?: unknown): ZkError {
    const where = path === undefined ? '' : ` ${path}`;
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    return new ZkError(
      ZkErrorCode.ClientClosed,
      `${operation}${where}: the client is closed${why}`,
      { path, cause },
    );
  }

  private errorOf(
    rc: number,
    operation: string,
    path: string | undefined,
    cause: unknown,
  ): ZkError {
    const where = path === undefined ? '' : ` ${path}`;
    if (rc === Rc.failedWithCause && ZkError.isInstance(cause)) {
      // A transaction's op error names its own op; others are told which call they ended.
      if (cause.path !== undefined || cause.opIndex !== undefined) return cause;
      return new ZkError(cause.code, `${operation}${where}: ${cause.message}`, {
        path,
        rc: cause.rc,
        cause: cause.cause,
      });
    }
    if (rc === Rc.closing || rc === Rc.invalidState) {
      if (this.tornDown) return this.closedError(operation, path, cause);
      return new ZkError(
        ZkErrorCode.SessionExpired,
        `${operation}${where}: the session ended mid-call`,
        { path, rc },
      );
    }
    if (rc === Rc.unimplemented && transportFeatures.has(operation)) {
      if (this.transport.name !== 'typescript') {
        return new ZkError(
          ZkErrorCode.Unimplemented,
          `${operation}${where}: the ${this.transport.name} transport cannot do this; use the default (TypeScript) transport`,
          { path, rc },
        );
      }
      return new ZkError(
        ZkErrorCode.Unimplemented,
        `${operation}${where}: the server does not know this operation (an older ZooKeeper)`,
        { path, rc },
      );
    }
    const error = errorFromRc(rc, operation, path);
    if (cause === undefined) return error;
    return new ZkError(error.code, `${error.message}: ${(cause as Error).message}`, {
      path,
      rc,
      cause,
    });
  }

  /**
   * Runs one call on the current handle. Idempotent calls are retried under the retry policy
   * after ConnectionLoss (and on the new session after expiry); others fail at once. While the
   * client has never been connected, calls wait for the first session (at most
   * `connectTimeoutMs`, then `ConnectTimeout`). Otherwise the first attempt is issued
   * synchronously, so calls made back to back are pipelined.
   */
  private execute<T>(
    operation: string,
    path: string | undefined,
    idempotent: boolean,
    attempt: (
      handle: SessionHandle,
      settle: (rc: number, value?: T, cause?: unknown) => void,
      retry: number,
    ) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.tornDown) {
        reject(this.closedError(operation, path));
        return;
      }
      const started = performance.now();
      let retries = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let cancelWait: (() => void) | undefined;
      const call: PendingCall = {
        inFlight: false,
        cancel: () => {
          clearTimeout(timer);
          cancelWait?.();
          reject(this.closedError(operation, path));
        },
      };
      const fail = (error: ZkError) => {
        this.pending.delete(call);
        reject(error);
      };
      const run = (): void => {
        timer = undefined;
        if (this.tornDown) return fail(this.closedError(operation, path));
        if (!this.hadSession) {
          // Never connected: "ZooKeeper unreachable" must not look like a slow server.
          const remaining = this.options.connectTimeoutMs - (performance.now() - started);
          cancelWait = this.untilConnected(remaining, operation, (error) => {
            cancelWait = undefined;
            if (!this.pending.has(call)) return;
            if (!error) return run();
            fail(
              error.code === ZkErrorCode.ClientClosed ? this.closedError(operation, path) : error,
            );
          });
          return;
        }
        const handle = this.handle;
        const settle = (rc: number, value?: T, cause?: unknown): void => {
          call.inFlight = false;
          if (!this.pending.has(call)) return;
          if (rc === Rc.ok) {
            this.pending.delete(call);
            resolve(value as T);
            return;
          }
          const error = this.errorOf(rc, operation, path, cause);
          if (
            idempotent &&
            !this.tornDown &&
            (error.isRetryable || error.code === ZkErrorCode.SessionExpired)
          ) {
            retries += 1;
            const delay = this.options.retry.nextDelayMs(
              retries,
              performance.now() - started,
              error,
            );
            if (delay !== undefined) {
              timer = setTimeout(run, delay);
              return;
            }
          }
          fail(error);
        };
        if (!handle) {
          settle(Rc.closing);
          return;
        }
        call.inFlight = true;
        attempt(handle, settle, retries);
      };
      this.pending.add(call);
      run();
    });
  }

  private runCreate(path: string, data?: ZkData, options?: CreateOptions): Promise<Created> {
    let request: CreateRequest;
    try {
      request = resolveCreate(path, data, options);
      checkRequestSize(
        'create',
        path,
        this.chroot + path,
        request.data,
        createHeaderBytes(request.acl ?? this.options.defaultAcl ?? OPEN_ACL_UNSAFE, request.ttlMs),
      );
    } catch (error) {
      return Promise.reject(error);
    }
    const attempt = this.createOnce(request);
    if (!request.parents) return attempt;
    const mode = request.parents;
    return attempt.catch(async (error: unknown) => {
      if (!ZkError.isInstance(error) || error.code !== ZkErrorCode.NoNode) throw error;
      // A container parent can vanish again before our create lands: try a few times.
      let lastError: unknown = error;
      for (let tries = 0; tries < 5; tries++) {
        await this.runMkdirp(parentOf(request.path), { mode, acl: request.acl });
        try {
          return await this.createOnce(request);
        } catch (retryError) {
          lastError = retryError;
          if (!ZkError.isInstance(retryError) || retryError.code !== ZkErrorCode.NoNode)
            throw retryError;
        }
      }
      throw lastError;
    });
  }

  private createOnce(request: CreateRequest): Promise<Created> {
    const acl = request.acl ?? this.options.defaultAcl;
    return this.execute<Created>('create', request.path, false, (handle, settle) => {
      handle.create(request.path, request.data, request.flags, request.ttlMs, acl, settle);
    });
  }

  private runGet(path: string): Promise<NodeData> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('get', path, true, (handle, settle) => handle.get(path, false, settle));
  }

  private runSet(path: string, data: ZkData, version?: number): Promise<Stat> {
    let bytes: Buffer;
    let expected: number;
    try {
      validatePath(path);
      bytes = toDataBuffer(data, path);
      expected = validateVersion(version, path);
      checkRequestSize('set', path, this.chroot + path, bytes, 8 + 4); // xid+type, version
    } catch (error) {
      return Promise.reject(error);
    }
    // Writing without a version is idempotent; with one, a retry could report BadVersion wrongly.
    return this.execute('set', path, expected === -1, (handle, settle) =>
      handle.set(path, bytes, expected, settle),
    );
  }

  private runDelete(path: string, version?: number): Promise<void> {
    let expected: number;
    try {
      validatePath(path);
      if (path === '/')
        throw new ZkError(ZkErrorCode.InvalidPath, 'Invalid path "/": the root cannot be deleted', {
          path,
        });
      expected = validateVersion(version, path);
    } catch (error) {
      return Promise.reject(error);
    }
    let lostConnection = false;
    return this.execute('delete', path, true, (handle, settle) => {
      handle.delete(path, expected, (rc, _value, cause) => {
        // After a lost connection, NoNode means our earlier attempt (or someone) deleted it: gone.
        if (rc === Rc.noNode && lostConnection) return settle(Rc.ok);
        if (rc === Rc.connectionLoss || rc === Rc.operationTimeout) lostConnection = true;
        settle(rc, undefined, cause);
      });
    });
  }

  private runExists(path: string): Promise<Stat | null> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute<Stat | null>('exists', path, true, (handle, settle) => {
      handle.exists(path, false, (rc, stat, cause) => {
        if (rc === Rc.noNode) return settle(Rc.ok, null);
        settle(rc, stat, cause);
      });
    });
  }

  // Names only, or with the Stat: the promise resolves in the reply's turn either way (no
  // `then` in between), so its continuation comes before any watch event read after the reply.
  private runChildren(path: string, namesOnly: true): Promise<string[]>;
  private runChildren(path: string, namesOnly: false): Promise<ChildrenWithStat>;
  private runChildren(path: string, namesOnly: boolean): Promise<string[] | ChildrenWithStat> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute<string[] | ChildrenWithStat>('children', path, true, (handle, settle) => {
      handle.children(path, false, (rc, listing, cause) => {
        if (rc !== Rc.ok || !listing) return settle(rc, undefined, cause);
        const children = listing.children.sort();
        settle(rc, namesOnly ? children : { children, stat: listing.stat });
      });
    });
  }

  private async runMkdirp(path: string, options: MkdirpOptions = {}): Promise<void> {
    validatePath(path);
    const mode = options.mode ?? 'persistent';
    if (mode !== 'persistent' && mode !== 'container') {
      throw bad(
        `mkdirp ${path}: mode must be 'persistent' or 'container', got ${String(mode)}`,
        path,
      );
    }
    if (path === '/') return;
    const acl = options.acl === undefined ? undefined : validateAcl(options.acl, path);
    const segments = path.split('/').slice(1);
    // ZooKeeper reaps an empty container: one made here, or found here, can go before its child
    // is made (NoNode). Walk again then; a few times, as a reaper that keeps winning is a bug.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.mkdirpWalk(segments, mode, acl);
        return;
      } catch (error) {
        if (!ZkError.isInstance(error) || error.code !== ZkErrorCode.NoNode) throw error;
        if (attempt >= MKDIRP_ATTEMPTS) throw error;
      }
    }
  }

  private async mkdirpWalk(
    segments: readonly string[],
    mode: 'persistent' | 'container',
    acl: readonly Acl[] | undefined,
  ): Promise<void> {
    // Fast path: most of the time only the last segments are missing.
    let missingFrom = segments.length;
    while (missingFrom > 0) {
      const prefix = `/${segments.slice(0, missingFrom).join('/')}`;
      if (await this.runExists(prefix)) break;
      missingFrom -= 1;
    }
    for (let index = missingFrom; index < segments.length; index++) {
      const prefix = `/${segments.slice(0, index + 1).join('/')}`;
      try {
        await this.createIdempotent(prefix, mode, acl);
      } catch (error) {
        if (ZkError.isInstance(error) && error.code === ZkErrorCode.NodeExists) continue;
        throw error;
      }
    }
  }

  // A create of a fixed path is safe to retry: NodeExists after a lost connection means done.
  private createIdempotent(
    path: string,
    mode: 'persistent' | 'container',
    acl: readonly Acl[] | undefined,
  ): Promise<void> {
    const flags = mode === 'container' ? CreateFlag.container : CreateFlag.persistent;
    const nodeAcl = acl ?? this.options.defaultAcl;
    const empty = Buffer.alloc(0);
    let lostConnection = false;
    return this.execute<void>('create', path, true, (handle, settle) => {
      handle.create(path, empty, flags, -1, nodeAcl, (rc, _created, cause) => {
        if (rc === Rc.nodeExists && lostConnection) return settle(Rc.ok);
        if (rc === Rc.connectionLoss || rc === Rc.operationTimeout) lostConnection = true;
        settle(rc, undefined, cause);
      });
    });
  }

  private runSync(path: string): Promise<void> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('sync', path, true, (handle, settle) => handle.sync(path, settle));
  }

  private runGetAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('getAcl', path, true, (handle, settle) => handle.getAcl(path, settle));
  }

  private runSetAcl(path: string, acl: readonly Acl[], version?: number): Promise<void> {
    let expected: number;
    let checked: readonly Acl[];
    try {
      validatePath(path);
      checked = validateAcl(acl, path);
      expected = validateVersion(version, path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute<void>('setAcl', path, expected === -1, (handle, settle) =>
      handle.setAcl(path, expected, checked, (rc, _stat, cause) => settle(rc, undefined, cause)),
    );
  }

  private runMulti(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    let resolved: ReturnType<typeof resolveTransaction>;
    try {
      resolved = resolveTransaction(ops, this.chroot, this.options.defaultAcl);
    } catch (error) {
      return Promise.reject(error);
    }
    if (resolved.length === 0) return Promise.resolve([]);
    return this.execute<TransactionResult[]>('multi', undefined, false, (handle, settle) =>
      handle.multi(resolved, (rc, results, cause) => {
        if (rc !== Rc.ok || !results) return settle(rc, undefined, cause);
        const outcome = transactionOutcome(resolved, results);
        if (ZkError.isInstance(outcome)) {
          // Not a return code of the call: reject with the failed op's error as it is.
          this.rejectWith(settle, outcome);
          return;
        }
        settle(Rc.ok, outcome);
      }),
    );
  }

  /** Settles a call with a ready ZkError (a failed transaction op). */
  private rejectWith(
    settle: (rc: number, value?: never, cause?: unknown) => void,
    error: ZkError,
  ): void {
    settle(Rc.failedWithCause, undefined, error);
  }

  private runGetAllChildrenNumber(path: string): Promise<number> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('getAllChildrenNumber', path, true, (handle, settle) =>
      handle.getAllChildrenNumber(path, settle),
    );
  }

  private runGetEphemerals(prefix = '/'): Promise<string[]> {
    try {
      validatePath(prefix);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute<string[]>('getEphemerals', prefix, true, (handle, settle) =>
      handle.getEphemerals(prefix, (rc, paths, cause) => settle(rc, paths?.sort(), cause)),
    );
  }

  private runWhoAmI(): Promise<ClientInfo[]> {
    return this.execute('whoAmI', undefined, true, (handle, settle) => handle.whoAmI(settle));
  }

  private runGetConfig(): Promise<NodeData> {
    return this.execute('getConfig', undefined, true, (handle, settle) =>
      handle.getConfig(false, settle),
    );
  }
}

/**
 * Creates a ZooKeeper client and starts connecting. Options are checked first: a bad one
 * throws ZkError `BadArguments` naming it.
 *
 * ## Example
 * ```ts
 * import { createClient } from '@zkrx/core';
 *
 * const client = createClient({ connect: '127.0.0.1:2181', sessionTimeoutMs: 10_000 });
 * client.session$.subscribe(({ state }) => console.log(state));
 * await client.promises.mkdirp('/app/config');
 * await client.close();
 * // Output: connecting
 * //         connected
 * //         closed
 * ```
 *
 * @param options Where to connect and how.
 * @return The client; `await client.connected()` to wait for the first session.
 */
export function createClient(options: ZkClientOptions): ZkClient {
  return new ZkClient(options);
}
