/**
 * What a transport is to the client: it opens sessions, each a handle taking ZooKeeper calls.
 * The default speaks the wire protocol in TypeScript; `@zkrx/core/native` wraps the C client.
 */
import type { ConnectionOptions } from 'node:tls';
import type { Acl } from '../znode/acl';
import type { Stat } from '../znode/stat';
import type { Logger, LogLevel } from './logger';

/** A session's id and password (hex), e.g. for `@zkrx/testing`'s `expireSession`. */
export interface SessionCredentials {
  sessionId: string;
  password: string;
}

/** A node's data and metadata, as `get` and `watchData` report them. */
export interface NodeData {
  readonly data: Buffer;
  readonly stat: Stat;
}

/** What `create` returns: the node's actual path (sequence included) and its metadata. */
export interface Created {
  readonly path: string;
  readonly stat: Stat;
}

/** Who the server thinks the session is (`whoAmI`): one entry per authentication. */
export interface ClientInfo {
  readonly authScheme: string;
  readonly user: string;
}

/** The watch events a transport reports (for paths the client sees, chroot removed). */
export type WatchEventType = 'created' | 'deleted' | 'changed' | 'child' | 'notwatching';

/** One op of a transaction as a transport takes it (validated, data as bytes). */
export type TransportOp =
  | {
      readonly type: 'create';
      readonly path: string;
      readonly data: Buffer;
      readonly flags: number;
      readonly ttlMs: number;
      readonly acl: readonly Acl[] | undefined;
    }
  | { readonly type: 'delete'; readonly path: string; readonly version: number }
  | { readonly type: 'set'; readonly path: string; readonly data: Buffer; readonly version: number }
  | { readonly type: 'check'; readonly path: string; readonly version: number };

/** One result of a transaction; `error` carries the op's return code (0 for ops rolled back). */
export type TransportOpResult =
  | { readonly type: 'create'; readonly path: string; readonly stat: Stat | undefined }
  | { readonly type: 'delete' }
  | { readonly type: 'set'; readonly stat: Stat }
  | { readonly type: 'check' }
  | { readonly type: 'error'; readonly rc: number };

/**
 * A completion: a return code (0, or a KeeperException code), the value when 0, and for a lost
 * connection why it was lost (e.g. a ZkError `MarshallingError` for a malformed frame).
 */
export type Reply<T> = (rc: number, value?: T, cause?: Error) => void;

/** `addWatch` modes. */
export type PersistentWatchMode = 'persistent' | 'persistent-recursive';

/** Every operation a transport carries: its request (validated, paths the client's) and result. */
export interface OperationTypes {
  create: {
    request: {
      readonly path: string;
      readonly data: Buffer;
      readonly flags: number;
      /** -1 for none. */
      readonly ttlMs: number;
      readonly acl: readonly Acl[] | undefined;
    };
    result: Created;
  };
  get: { request: { readonly path: string; readonly watch: boolean }; result: NodeData };
  exists: { request: { readonly path: string; readonly watch: boolean }; result: Stat };
  children: {
    request: { readonly path: string; readonly watch: boolean };
    result: { children: string[]; stat: Stat };
  };
  set: {
    request: { readonly path: string; readonly data: Buffer; readonly version: number };
    result: Stat;
  };
  delete: { request: { readonly path: string; readonly version: number }; result: undefined };
  sync: { request: { readonly path: string }; result: undefined };
  getAcl: { request: { readonly path: string }; result: { acl: Acl[]; stat: Stat } };
  setAcl: {
    request: { readonly path: string; readonly acl: readonly Acl[]; readonly version: number };
    result: Stat;
  };
  multi: { request: { readonly ops: readonly TransportOp[] }; result: TransportOpResult[] };
  getAllChildrenNumber: { request: { readonly path: string }; result: number };
  /** `path`: the prefix; the result's paths are the client's (outside the chroot: left out). */
  getEphemerals: { request: { readonly path: string }; result: string[] };
  whoAmI: { request: Readonly<Record<string, never>>; result: ClientInfo[] };
  /** The ensemble's configuration node (never under a chroot). */
  getConfig: { request: { readonly watch: boolean }; result: NodeData };
  addWatch: {
    request: { readonly path: string; readonly mode: PersistentWatchMode };
    result: undefined;
  };
  /** `type`: ZooKeeper's WatcherType (1 children, 2 data, 3 any, 4 persistent, 5 recursive). */
  removeWatches: { request: { readonly path: string; readonly type: number }; result: undefined };
}

/** The name of an operation (`get`, `create`, ...): one name from the client down to the wire. */
export type OperationName = keyof OperationTypes;
/** What operation `N` sends. */
export type OperationRequest<N extends OperationName> = OperationTypes[N]['request'];
/** What operation `N` answers. */
export type OperationResult<N extends OperationName> = OperationTypes[N]['result'];

/**
 * One session at most: it connects, reconnects on the same session while it lives, and dies when
 * the session expires, credentials are refused, or `close()` is called. A dead handle fails
 * every call with `Rc.closing` at once. Paths are the client's (the handle applies the chroot).
 */
export interface SessionHandle {
  /** The session id (hex), `'0'` before the first connection. */
  readonly sessionId: string;
  /** The negotiated session timeout, or -1 before the first connection. */
  readonly negotiatedTimeoutMs: number;
  /** Connected to a read-only server (`canBeReadOnly`). */
  readonly readOnly: boolean;
  readonly isDead: boolean;
  /**
   * The zxid of the last reply the session read (0 before any), where the transport knows it:
   * changes with a higher zxid happened after everything it has heard.
   */
  readonly lastZxidSeen?: number;
  /**
   * performance.now() before which a read-write server surely last heard from the session: when
   * the latest request one answered (a ping, the ConnectRequest) was sent. ZooKeeper expires a
   * session only a whole session timeout after it last heard from it, so it lives at least
   * until `heardAt + negotiatedTimeoutMs`. A read-only server's answers do not move it.
   * Undefined where the transport cannot tell (the client then assumes the least).
   */
  readonly heardAt?: number;
  /**
   * The server the handle is connected to, `host:port` as its server list names it; undefined
   * while not connected, or where the transport cannot tell.
   */
  readonly server?: string;
  /**
   * The servers to connect to from now on (the ensemble's configuration, which the client
   * follows), names as written. A transport may move a connected session to rebalance the
   * ensemble's clients; a move it makes without losing the session is reported with
   * `onMoved`, one that loses the connection as usual (`onDisconnected`). Absent: the
   * transport keeps the servers it was opened with.
   */
  updateServers?(servers: readonly { readonly host: string; readonly port: number }[]): void;
  credentials(): SessionCredentials | undefined;
  /**
   * Ends the session: sends closeSession when connected and resolves on its answer or after a
   * bound; the handle is dead at once. Requests in flight get their replies first where the
   * server sends them. Never blocks the event loop.
   */
  close(): Promise<void>;
  /**
   * Sends one operation; `reply` is called once with the server's answer (or why there is
   * none). When `signal` aborts while the request is not written yet (waiting for a
   * connection), the transport withdraws it and replies at once with `Rc.failedWithCause` and
   * a ZkError `Aborted`: it was never sent. A request already written is answered as usual.
   */
  call<N extends OperationName>(
    operation: N,
    request: OperationRequest<N>,
    reply: Reply<OperationResult<N>>,
    signal?: AbortSignal,
  ): void;
}

/** What a handle tells the client. */
export interface SessionListener {
  /** A connection is established on the handle's session (the first, or a reconnection). */
  onConnected(handle: SessionHandle): void;
  /** The connection was lost; the handle reconnects by itself while the session may live. */
  onDisconnected(handle: SessionHandle, reason: Error | undefined): void;
  /**
   * The session is on a server again with no `onDisconnected` before — the session was never in
   * doubt: a move the handle made itself (`planned`: rebalancing, its server left the list) or a
   * reconfiguration's leader hand-off ridden out (`hand-off`: the server dropped the connection
   * and the session was back within the bound). Watches without a replay (persistent ones) may
   * have missed events meanwhile, as across a reconnection.
   */
  onMoved?(handle: SessionHandle, how: 'planned' | 'hand-off'): void;
  /** The handle is dead: `rc` 0 (closed by us), -112 (expired), -115 (auth failed)... */
  onClosed(handle: SessionHandle, rc: number): void;
  onWatchEvent(handle: SessionHandle, type: WatchEventType, path: string): void;
}

/** What a transport needs to open a session. */
export interface SessionOptions {
  /**
   * `host:port[,host:port...][/chroot]`: the client's connect string, or — after its session
   * expired — the servers it follows then, with the same chroot.
   */
  readonly connect: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly auth: readonly { readonly scheme: string; readonly credentials: string }[];
  /** SASL DIGEST-MD5 login, done on every connection before any request. */
  readonly sasl: { readonly username: string; readonly password: string } | undefined;
  readonly tls: ConnectionOptions | undefined;
  readonly canBeReadOnly: boolean;
  /** Largest reply read from a server; a larger one fails its own call (`ReplyTooLarge`). */
  readonly maxFrameBytes: number;
  /** Send a turn's watchless gets as one multiRead (default true; TypeScript transport). */
  readonly batchReads?: boolean;
  /** Resolves the connect string's host names (default: the system resolver, every address). */
  readonly lookup?: (hostname: string) => Promise<readonly string[]> | readonly string[];
  /** Where the transport logs (already filtered at `logLevel`). */
  readonly log: Required<Logger>;
  readonly logLevel: LogLevel;
}

/**
 * Opens ZooKeeper sessions for a client. `@zkrx/core`'s default is {@link protocolTransport}
 * (TypeScript); `nativeTransport()` from `@zkrx/core/native` uses the `zookeeper` binding.
 */
export interface Transport {
  /** A short name for messages: `typescript`, `native`. */
  readonly name: string;
  /** Starts a session (connecting at once). */
  open(options: SessionOptions, listener: SessionListener): SessionHandle;
}
