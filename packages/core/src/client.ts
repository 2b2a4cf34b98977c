/**
 * ZkClient: one ZooKeeper session (renewed by itself after expiry), its state as `session$`,
 * its operations as cold observables and promises, and its watch streams.
 */
import { BehaviorSubject, distinctUntilChanged, filter, map, Observable } from 'rxjs';
import { type Acl, OPEN_ACL_UNSAFE } from './acl';
import {
  CreateFlags,
  type HandleListener,
  type NativeAcl,
  NativeHandle,
  type NativeSessionCredentials,
  type NativeStat,
  type NativeWatchEvent,
  Rc,
} from './binding';
import {
  type ResolvedClientOptions,
  resolveClientOptions,
  type ZkClientOptions,
} from './client-options';
import { errorFromRc, ZkError, ZkErrorCode } from './errors';
import { type Logger, leveledLogger, levelRank, nativeLineLevel } from './logger';
import { MAX_DATA_BYTES, parentOf, toDataBuffer, validatePath, type ZkData } from './paths';
import {
  isConnectedState,
  isTerminalState,
  type SessionEvent,
  type SessionState,
} from './session-state';
import { type Stat, toStat } from './stat';
import { type NodeData, WatchRegistry } from './watch-registry';

/** How a node lives: until deleted, until its session ends, or until its last child goes. */
export type CreateMode = 'persistent' | 'ephemeral' | 'container';

export interface CreateOptions {
  /** Default `persistent`. */
  mode?: CreateMode;
  /** Let the server append a 10-digit sequence number to the name. */
  sequential?: boolean;
  /** Persistent nodes only: the server deletes the node once unchanged and childless this long. */
  ttlMs?: number;
  /** The node's ACL (default: the client's `defaultAcl`, else open). */
  acl?: readonly Acl[];
  /** Create missing parents first, as `persistent` or `container` nodes. */
  parents?: 'persistent' | 'container';
}

export interface MkdirpOptions {
  /** Mode of the nodes created. Default `persistent`. */
  mode?: 'persistent' | 'container';
  acl?: readonly Acl[];
}

/** What `create` returns: the node's actual path (sequence included) and its metadata. */
export interface Created {
  readonly path: string;
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
  mkdirp(path: string, options?: MkdirpOptions): Promise<void>;
  sync(path: string): Promise<void>;
  getAcl(path: string): Promise<{ acl: Acl[]; stat: Stat }>;
  setAcl(path: string, acl: readonly Acl[], version?: number): Promise<void>;
}

const MAX_TTL_MS = 0xff_ffff_ffff;
const createModes: readonly CreateMode[] = ['persistent', 'ephemeral', 'container'];

/**
 * Rejects a request larger than the server's default `jute.maxbuffer` before it is sent: the
 * server answers one by dropping the connection, which the caller would see as ConnectionLoss
 * (and an idempotent `set` would retry into a reconnect loop). Sizes are jute's encoding:
 * `headerBytes` counts everything but the path and the data (each with its 4-byte length).
 */
function checkRequestSize(
  operation: string,
  path: string,
  serverPath: string,
  data: Buffer,
  headerBytes: number,
): void {
  const size = headerBytes + 4 + Buffer.byteLength(serverPath) + 4 + data.length;
  if (size > MAX_DATA_BYTES) {
    throw bad(
      `${operation} ${path}: the request is ${size} bytes (${data.length} of data), more than ZooKeeper's limit of ${MAX_DATA_BYTES} (jute.maxbuffer)`,
      path,
    );
  }
}

/** Jute size of a create's ACL list, flags and TTL (request header included). */
function createHeaderBytes(acl: readonly Acl[], ttlMs: number): number {
  let bytes = 8 + 4 + 4 + (ttlMs > 0 ? 8 : 0); // xid+type, ACL count, flags, TTL
  for (const entry of acl) {
    bytes += 4 + 4 + Buffer.byteLength(entry.scheme) + 4 + Buffer.byteLength(entry.id);
  }
  return bytes;
}

// Every live client that logs: the C client's log lines are process-wide, so each gets them.
const nativeLogSinks = new Set<{ level: number; log: Required<Logger> }>();

function nativeLogLevel(): number {
  let level = 0;
  for (const sink of nativeLogSinks) level = Math.max(level, sink.level);
  return level;
}

function toNativeAcl(acl: readonly Acl[]): NativeAcl[] {
  return acl.map((entry) => ({ perm: entry.permissions, scheme: entry.scheme, auth: entry.id }));
}

function fromNativeAcl(acl: readonly NativeAcl[]): Acl[] {
  return acl.map((entry) => ({ permissions: entry.perm, scheme: entry.scheme, id: entry.auth }));
}

function validateAcl(acl: unknown, path: string): readonly Acl[] {
  if (!Array.isArray(acl) || acl.length === 0) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `Invalid ACL for ${path}: expected a non-empty array`,
      {
        path,
      },
    );
  }
  for (const entry of acl as Acl[]) {
    if (
      typeof entry?.scheme !== 'string' ||
      typeof entry.id !== 'string' ||
      !Number.isInteger(entry.permissions) ||
      entry.permissions < 0 ||
      entry.permissions > 31
    ) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `Invalid ACL entry for ${path}: ${JSON.stringify(entry)} (expected { permissions: 0..31, scheme, id })`,
        { path },
      );
    }
  }
  return acl as Acl[];
}

function validateVersion(version: unknown, path: string): number {
  if (version === undefined) return -1;
  if (
    typeof version !== 'number' ||
    !Number.isInteger(version) ||
    version < -1 ||
    version > 2 ** 31 - 1
  ) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `Invalid version for ${path}: expected an integer >= -1, got ${String(version)}`,
      { path },
    );
  }
  return version;
}

interface CreateRequest {
  readonly path: string;
  readonly data: Buffer;
  readonly flags: number;
  readonly ttlMs: number;
  readonly acl: readonly Acl[] | undefined;
  readonly parents: 'persistent' | 'container' | undefined;
}

function bad(message: string, path?: string): ZkError {
  return new ZkError(ZkErrorCode.BadArguments, message, { path });
}

function resolveCreate(path: string, data: ZkData, options: CreateOptions = {}): CreateRequest {
  if (typeof options !== 'object' || options === null)
    throw bad(`create ${path}: options must be an object`, path);
  const mode = options.mode ?? 'persistent';
  if (!createModes.includes(mode)) {
    throw bad(
      `create ${path}: mode must be one of ${createModes.join(', ')}, got ${String(mode)}`,
      path,
    );
  }
  const sequential = options.sequential ?? false;
  if (typeof sequential !== 'boolean')
    throw bad(`create ${path}: sequential must be a boolean`, path);
  validatePath(path, { sequential });
  if (path === '/')
    throw new ZkError(ZkErrorCode.InvalidPath, 'Invalid path "/": the root always exists', {
      path,
    });
  if (mode === 'container' && sequential)
    throw bad(`create ${path}: a container node cannot be sequential`, path);
  const ttlMs = options.ttlMs;
  if (ttlMs !== undefined) {
    if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_TTL_MS) {
      throw bad(
        `create ${path}: ttlMs must be a positive integer up to ${MAX_TTL_MS}, got ${String(ttlMs)}`,
        path,
      );
    }
    if (mode !== 'persistent')
      throw bad(`create ${path}: ttlMs needs mode 'persistent', got '${mode}'`, path);
  }
  const parents = options.parents;
  if (parents !== undefined && parents !== 'persistent' && parents !== 'container') {
    throw bad(
      `create ${path}: parents must be 'persistent' or 'container', got ${String(parents)}`,
      path,
    );
  }
  let flags: number;
  if (ttlMs !== undefined)
    flags = sequential ? CreateFlags.persistentSequentialWithTtl : CreateFlags.persistentWithTtl;
  else if (mode === 'container') flags = CreateFlags.container;
  else
    flags =
      (mode === 'ephemeral' ? CreateFlags.ephemeral : CreateFlags.persistent) |
      (sequential ? CreateFlags.sequential : 0);
  return {
    path,
    data: toDataBuffer(data, path),
    flags,
    ttlMs: ttlMs ?? -1,
    acl: options.acl === undefined ? undefined : validateAcl(options.acl, path),
    parents,
  };
}

interface PendingCall {
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
  private readonly log: Required<Logger>;
  private readonly logSink: { level: number; log: Required<Logger> } | undefined;
  private readonly sessionSubject: BehaviorSubject<SessionEvent>;
  private readonly watches: WatchRegistry;
  private readonly pending = new Set<PendingCall>();
  private readonly tracked = new Set<Promise<unknown>>();
  private handle: NativeHandle | undefined;
  private connectedOnHandle = false;
  private hadSession = false;
  private suspendTimer: ReturnType<typeof setTimeout> | undefined;
  private closedFlag = false;
  private closePromise: Promise<void> | undefined;
  private warnedStockBinding = false;
  private readonly listener: HandleListener;
  /** The connect string's chroot (`''` without one): the server sees it before every path. */
  private readonly chroot: string;

  constructor(options: ZkClientOptions) {
    this.options = resolveClientOptions(options);
    this.connectString = this.options.connect;
    const slash = this.connectString.indexOf('/');
    this.chroot =
      slash === -1 || this.connectString.length === slash + 1
        ? ''
        : this.connectString.slice(slash);
    this.log = leveledLogger(this.options.logger, this.options.logLevel);
    if (this.options.logger && this.options.logLevel !== 'silent') {
      this.logSink = { level: levelRank(this.options.logLevel), log: this.log };
      nativeLogSinks.add(this.logSink);
    }
    this.sessionSubject = new BehaviorSubject<SessionEvent>({
      state: 'connecting',
      sessionId: undefined,
    });
    this.session$ = this.sessionSubject.asObservable();
    this.watches = new WatchRegistry({
      currentHandle: () => this.handle,
      whenConnected: (callback) => this.whenConnected(callback),
      isClosed: () => this.closedFlag,
    });
    this.listener = {
      onConnected: (handle) => this.onConnected(handle),
      onConnecting: (handle) => this.onConnecting(handle),
      onClosed: (handle, code) => this.onHandleClosed(handle, code),
      onWatchEvent: (handle, event, path) => this.onWatchEvent(handle, event, path),
      onLog: (lines) => this.onNativeLog(lines),
    };
    this.promises = {
      create: (path, data, options) => this.create$(path, data, options),
      get: (path) => this.get$(path),
      set: (path, data, version) => this.set$(path, data, version),
      delete: (path, version) => this.delete$(path, version),
      exists: (path) => this.exists$(path),
      children: (path) => this.children$(path),
      mkdirp: (path, options) => this.mkdirp$(path, options),
      sync: (path) => this.sync$(path),
      getAcl: (path) => this.getAcl$(path),
      setAcl: (path, acl, version) => this.setAcl$(path, acl, version),
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
    return this.closedFlag || this.closePromise !== undefined;
  }

  /** The session's negotiated timeout (ms), or the requested one before the first connection. */
  get sessionTimeoutMs(): number {
    const negotiated = this.handle?.negotiatedTimeoutMs ?? -1;
    return negotiated > 0 ? negotiated : this.options.sessionTimeoutMs;
  }

  /** The current session's id and password (hex), e.g. for `@zkrx/testing`'s `expireSession`. */
  sessionCredentials(): NativeSessionCredentials | undefined {
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
    const current = this.sessionSubject.value;
    if (isConnectedState(current.state)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let done = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Declared before subscribing: a finished session$ (closed, auth-failed) calls `finish`
      // synchronously inside `subscribe`, before the subscription could be assigned. A `const`
      // there threw a ReferenceError out of rxjs (an uncaught exception) and left the promise
      // pending forever.
      let subscription: { unsubscribe(): void } | undefined;
      const finish = (error?: ZkError) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        subscription?.unsubscribe();
        if (error) reject(error);
        else resolve();
      };
      timer = setTimeout(
        () =>
          finish(
            new ZkError(
              ZkErrorCode.ConnectTimeout,
              `No connection to ZooKeeper at ${this.connectString} within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      subscription = this.sessionSubject.subscribe({
        next: (event) => {
          if (isConnectedState(event.state)) finish();
          else if (event.state === 'auth-failed') {
            finish(new ZkError(ZkErrorCode.AuthFailed, 'ZooKeeper refused the credentials'));
          } else if (event.state === 'closed') finish(this.closedError('connected'));
        },
        complete: () => finish(this.closedError('connected')),
      });
      if (done) subscription.unsubscribe();
    });
  }

  /** Creates a node. */
  create(path: string, data?: ZkData, options?: CreateOptions): Observable<Created> {
    return cold(() => this.create$(path, data, options));
  }

  /** Reads a node's data and metadata. */
  get(path: string): Observable<NodeData> {
    return cold(() => this.get$(path));
  }

  /** Writes a node's data (if `version` is given, only when the node is at that version). */
  set(path: string, data: ZkData, version?: number): Observable<Stat> {
    return cold(() => this.set$(path, data, version));
  }

  /** Deletes a node (if `version` is given, only when the node is at that version). */
  delete(path: string, version?: number): Observable<void> {
    return cold(() => this.delete$(path, version));
  }

  /** A node's metadata, or `null` when it does not exist. */
  exists(path: string): Observable<Stat | null> {
    return cold(() => this.exists$(path));
  }

  /** A node's children names, sorted. */
  children(path: string): Observable<string[]> {
    return cold(() => this.children$(path));
  }

  /** Creates a path and every missing parent (existing nodes are fine). */
  mkdirp(path: string, options?: MkdirpOptions): Observable<void> {
    return cold(() => this.mkdirp$(path, options));
  }

  /** Waits until the server this client talks to has caught up with the leader for `path`. */
  sync(path: string): Observable<void> {
    return cold(() => this.sync$(path));
  }

  /** A node's ACL and metadata (the observable twin of `promises.getAcl`). */
  getAcl(path: string): Observable<{ acl: Acl[]; stat: Stat }> {
    return cold(() => this.getAcl$(path));
  }

  /** Replaces a node's ACL (if `version` is given, only when the ACL is at that version). */
  setAcl(path: string, acl: readonly Acl[], version?: number): Observable<void> {
    return cold(() => this.setAcl$(path, acl, version));
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
   * Keeps `close()` waiting for `work` (bounded by `closeTimeoutMs`): recipes track the lease
   * releases they start from synchronous teardowns this way.
   */
  track(work: Promise<unknown>): void {
    if (this.closedFlag) return;
    this.tracked.add(work);
    const forget = () => this.tracked.delete(work);
    work.then(forget, forget);
  }

  /**
   * Closes the session: waits for tracked work (at most `closeTimeoutMs`), closes the session
   * (its ephemeral nodes go with it), fails every pending call with ZkError `ClientClosed` and
   * completes every stream. Safe to call twice; no call after it reaches the server.
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
    this.closedFlag = true;
    clearTimeout(this.suspendTimer);
    for (const call of [...this.pending]) call.cancel();
    this.pending.clear();
    // Say 'closed' before the session goes: whatever holds a lock or leadership stops its work
    // while its ephemeral nodes still exist, so no successor can start before it has stopped.
    this.setState('closed', this.sessionId);
    const handle = this.handle;
    this.handle = undefined;
    handle?.close();
    // NativeHandle.close() runs the C client's close on the next turn of the event loop (never
    // inside a binding callback). Wait for it (setImmediate callbacks run in order): without
    // this, close() resolved before the closeSession went out, and the session's ephemeral
    // nodes were still there for whoever looked next.
    if (handle) await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.logSink) nativeLogSinks.delete(this.logSink);
    this.watches.close();
    this.sessionSubject.complete();
  }

  // ---- session lifecycle ----

  private openHandle(): void {
    if (this.closedFlag) return;
    this.connectedOnHandle = false;
    const handle = new NativeHandle(
      {
        connect: this.options.connect,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        logLevel: nativeLogLevel(),
      },
      this.listener,
    );
    this.handle = handle;
    for (const auth of this.options.auth) {
      handle.addAuth(auth.scheme, auth.credentials, (rc) => {
        if (rc !== Rc.ok && rc !== Rc.closing)
          this.log.warn(`addAuth ${auth.scheme} failed`, { rc });
      });
    }
    if (this.state !== 'connecting') this.setState('connecting', undefined);
  }

  private setState(state: SessionState, sessionId: string | undefined): void {
    const current = this.sessionSubject.value;
    if (isTerminalState(current.state)) return;
    this.log.debug(`session ${state}`, { sessionId });
    this.sessionSubject.next({ state, sessionId });
  }

  private onConnected(handle: NativeHandle): void {
    if (handle !== this.handle || this.closedFlag) return;
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    if (!this.connectedOnHandle) {
      this.connectedOnHandle = true;
      const renewed = this.hadSession;
      this.hadSession = true;
      this.setState('connected', handle.sessionId);
      if (renewed) this.watches.resync();
    } else {
      this.setState('reconnected', handle.sessionId);
    }
  }

  private onConnecting(handle: NativeHandle): void {
    if (handle !== this.handle || this.closedFlag) return;
    if (!this.connectedOnHandle || this.state === 'suspended') return;
    this.setState('suspended', handle.sessionId);
    // The server expires a silent session after its timeout: past that, treat it as expired
    // rather than let holders believe they still own ephemeral nodes.
    clearTimeout(this.suspendTimer);
    const timeout =
      handle.negotiatedTimeoutMs > 0 ? handle.negotiatedTimeoutMs : this.options.sessionTimeoutMs;
    this.suspendTimer = setTimeout(() => {
      this.suspendTimer = undefined;
      if (handle !== this.handle || this.state !== 'suspended') return;
      this.log.warn('no connection for a whole session timeout: the session is presumed expired', {
        sessionId: handle.sessionId,
        timeoutMs: timeout,
      });
      this.expire(handle);
    }, timeout);
  }

  private onHandleClosed(handle: NativeHandle, code: number): void {
    if (handle !== this.handle || this.closedFlag) return;
    if (code === Rc.authFailed || code === -113) {
      this.handle = undefined;
      this.setState('auth-failed', this.sessionId);
      this.log.error('ZooKeeper refused the credentials: the client is closed');
      void this.close();
      return;
    }
    this.expire(handle);
  }

  private expire(handle: NativeHandle): void {
    // The session's id as session$ last reported it: when the server said "expired", the
    // handle is already dead and its own `sessionId` reads '0' (the expired event carried '0').
    const sessionId = this.sessionId;
    this.handle = undefined;
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    handle.close();
    this.setState('expired', sessionId);
    this.openHandle();
  }

  private onWatchEvent(handle: NativeHandle, event: NativeWatchEvent, path: string): void {
    if (handle !== this.handle) return;
    this.watches.onEvent(event, path);
  }

  private onNativeLog(lines: readonly string[]): void {
    for (const line of lines) {
      const level = nativeLineLevel(line);
      const text = line.trim();
      for (const sink of nativeLogSinks) sink.log[level](text, { source: 'zookeeper-c-client' });
    }
  }

  private whenConnected(callback: () => void): () => void {
    let cancelled = false;
    if (isConnectedState(this.state)) {
      // Connected, yet the call failed: give the C client a moment rather than spin.
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

  private closedError(operation: string, path?: string): ZkError {
    const where = path === undefined ? '' : ` ${path}`;
    return new ZkError(ZkErrorCode.ClientClosed, `${operation}${where}: the client is closed`, {
      path,
    });
  }

  private errorOf(rc: number, operation: string, path: string | undefined): ZkError {
    if (rc === Rc.closing || rc === Rc.invalidState) {
      if (this.closedFlag) return this.closedError(operation, path);
      const where = path === undefined ? '' : ` ${path}`;
      return new ZkError(
        ZkErrorCode.SessionExpired,
        `${operation}${where}: the session ended mid-call`,
        {
          path,
          rc,
        },
      );
    }
    return errorFromRc(rc, operation, path);
  }

  /**
   * Runs one call on the current handle. Idempotent calls are retried under the retry policy
   * after ConnectionLoss (and on the new session after expiry); others fail at once.
   * The first attempt is issued synchronously, so calls made back to back are pipelined.
   */
  private execute<T>(
    operation: string,
    path: string | undefined,
    idempotent: boolean,
    attempt: (handle: NativeHandle, settle: (rc: number, value?: T) => void, retry: number) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closedFlag) {
        reject(this.closedError(operation, path));
        return;
      }
      const started = performance.now();
      let retries = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const call: PendingCall = {
        cancel: () => {
          clearTimeout(timer);
          reject(this.closedError(operation, path));
        },
      };
      const run = (): void => {
        timer = undefined;
        if (this.closedFlag) {
          this.pending.delete(call);
          reject(this.closedError(operation, path));
          return;
        }
        const handle = this.handle;
        const settle = (rc: number, value?: T): void => {
          if (!this.pending.has(call)) return;
          if (rc === Rc.ok) {
            this.pending.delete(call);
            resolve(value as T);
            return;
          }
          const error = this.errorOf(rc, operation, path);
          if (
            idempotent &&
            !this.closedFlag &&
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
          this.pending.delete(call);
          reject(error);
        };
        if (!handle) {
          settle(Rc.closing);
          return;
        }
        attempt(handle, settle, retries);
      };
      this.pending.add(call);
      run();
    });
  }

  private stat(stat: NativeStat | null): Stat {
    if (!stat) throw new ZkError(ZkErrorCode.SystemError, 'ZooKeeper returned no stat');
    return toStat(stat);
  }

  private create$(path: string, data?: ZkData, options?: CreateOptions): Promise<Created> {
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
      if (!(error instanceof ZkError) || error.code !== ZkErrorCode.NoNode) throw error;
      // A container parent can vanish again before our create lands: try a few times.
      let lastError: unknown = error;
      for (let tries = 0; tries < 5; tries++) {
        await this.mkdirp$(parentOf(request.path), { mode, acl: request.acl });
        try {
          return await this.createOnce(request);
        } catch (retryError) {
          lastError = retryError;
          if (!(retryError instanceof ZkError) || retryError.code !== ZkErrorCode.NoNode)
            throw retryError;
        }
      }
      throw lastError;
    });
  }

  private createOnce(request: CreateRequest): Promise<Created> {
    const acl = request.acl ?? this.options.defaultAcl;
    const firstHandle = this.handle;
    if (
      firstHandle &&
      !firstHandle.createsWithStat &&
      acl !== undefined &&
      acl !== OPEN_ACL_UNSAFE
    ) {
      return Promise.reject(
        new ZkError(
          ZkErrorCode.BadArguments,
          `create ${request.path}: ACLs on create need the zookeeper binding with zkrx's patch (see @zkrx/core's README)`,
          { path: request.path },
        ),
      );
    }
    const nativeAcl = acl === undefined ? null : toNativeAcl(acl);
    return this.execute<Created | string>('create', request.path, false, (handle, settle) => {
      handle.create(
        request.path,
        request.data,
        request.flags,
        request.ttlMs,
        nativeAcl,
        (rc, created, stat) => {
          if (rc !== Rc.ok) return settle(rc);
          if (stat) return settle(rc, { path: created, stat: toStat(stat) });
          settle(rc, created);
        },
      );
    }).then((result) => {
      if (typeof result !== 'string') return result;
      this.warnStockBinding();
      // Stock binding: no Stat from create, read it (one more round trip).
      return this.exists$(result).then((stat) => {
        if (!stat)
          throw new ZkError(ZkErrorCode.NoNode, `create ${result}: the node vanished at once`, {
            path: result,
          });
        return { path: result, stat };
      });
    });
  }

  private warnStockBinding(): void {
    if (this.warnedStockBinding) return;
    this.warnedStockBinding = true;
    this.log.warn(
      "the zookeeper binding lacks zkrx's a_create2 patch: each create costs one more round trip for its Stat",
    );
  }

  private get$(path: string): Promise<NodeData> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('get', path, true, (handle, settle) => {
      handle.get(path, false, (rc, stat, data) => {
        if (rc !== Rc.ok) return settle(rc);
        settle(rc, { data: data ?? Buffer.alloc(0), stat: this.stat(stat) });
      });
    });
  }

  private set$(path: string, data: ZkData, version?: number): Promise<Stat> {
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
    return this.execute('set', path, expected === -1, (handle, settle) => {
      handle.set(path, bytes, expected, (rc, stat) => {
        if (rc !== Rc.ok) return settle(rc);
        settle(rc, this.stat(stat));
      });
    });
  }

  private delete$(path: string, version?: number): Promise<void> {
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
      handle.delete(path, expected, (rc) => {
        // After a lost connection, NoNode means our earlier attempt (or someone) deleted it: gone.
        if (rc === Rc.noNode && lostConnection) return settle(Rc.ok);
        if (rc === Rc.connectionLoss || rc === Rc.operationTimeout) lostConnection = true;
        settle(rc);
      });
    });
  }

  private exists$(path: string): Promise<Stat | null> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('exists', path, true, (handle, settle) => {
      handle.exists(path, false, (rc, stat) => {
        if (rc === Rc.noNode) return settle(Rc.ok, null);
        if (rc !== Rc.ok) return settle(rc);
        settle(rc, this.stat(stat));
      });
    });
  }

  private children$(path: string): Promise<string[]> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('children', path, true, (handle, settle) => {
      handle.children(path, false, (rc, children) => {
        if (rc !== Rc.ok) return settle(rc);
        settle(rc, [...children].sort());
      });
    });
  }

  private async mkdirp$(path: string, options: MkdirpOptions = {}): Promise<void> {
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
    // ZooKeeper reaps an empty container: one made here, or found here, can go before its child
    // is made (NoNode). Walk again then; a few times, as a reaper that keeps winning is a bug.
    for (let walk = 1; ; walk++) {
      try {
        return await this.mkdirpWalk(path, mode, acl);
      } catch (error) {
        if (!(error instanceof ZkError) || error.code !== ZkErrorCode.NoNode || walk >= 10) {
          throw error;
        }
      }
    }
  }

  private async mkdirpWalk(
    path: string,
    mode: 'persistent' | 'container',
    acl: readonly Acl[] | undefined,
  ): Promise<void> {
    // Fast path: most of the time only the last segments are missing.
    const segments = path.split('/').slice(1);
    let missingFrom = segments.length;
    while (missingFrom > 0) {
      const prefix = `/${segments.slice(0, missingFrom).join('/')}`;
      if (await this.exists$(prefix)) break;
      missingFrom -= 1;
    }
    for (let index = missingFrom; index < segments.length; index++) {
      const prefix = `/${segments.slice(0, index + 1).join('/')}`;
      try {
        await this.createIdempotent(prefix, mode, acl);
      } catch (error) {
        if (error instanceof ZkError && error.code === ZkErrorCode.NodeExists) continue;
        throw error;
      }
    }
  }

  // A create of a fixed path is safe to retry: NodeExists after a lost connection means done.
  private createIdempotent(
    path: string,
    mode: 'persistent' | 'container',
    acl: readonly Acl[] | undefined,
  ) {
    const request: CreateRequest = {
      path,
      data: Buffer.alloc(0),
      flags: mode === 'container' ? CreateFlags.container : CreateFlags.persistent,
      ttlMs: -1,
      acl,
      parents: undefined,
    };
    const nativeAcl =
      (acl ?? this.options.defaultAcl) === undefined
        ? null
        : toNativeAcl(acl ?? this.options.defaultAcl ?? []);
    let lostConnection = false;
    return this.execute<void>('create', path, true, (handle, settle) => {
      handle.create(request.path, request.data, request.flags, -1, nativeAcl, (rc) => {
        if (rc === Rc.nodeExists && lostConnection) return settle(Rc.ok);
        if (rc === Rc.connectionLoss || rc === Rc.operationTimeout) lostConnection = true;
        settle(rc);
      });
    });
  }

  private sync$(path: string): Promise<void> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('sync', path, true, (handle, settle) =>
      handle.sync(path, (rc) => settle(rc)),
    );
  }

  private getAcl$(path: string): Promise<{ acl: Acl[]; stat: Stat }> {
    try {
      validatePath(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('getAcl', path, true, (handle, settle) => {
      handle.getAcl(path, (rc, acl, stat) => {
        if (rc !== Rc.ok) return settle(rc);
        settle(rc, { acl: fromNativeAcl(acl), stat: this.stat(stat) });
      });
    });
  }

  private setAcl$(path: string, acl: readonly Acl[], version?: number): Promise<void> {
    let expected: number;
    let nativeAcl: NativeAcl[];
    try {
      validatePath(path);
      nativeAcl = toNativeAcl(validateAcl(acl, path));
      expected = validateVersion(version, path);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.execute('setAcl', path, expected === -1, (handle, settle) =>
      handle.setAcl(path, expected, nativeAcl, (rc) => settle(rc)),
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
