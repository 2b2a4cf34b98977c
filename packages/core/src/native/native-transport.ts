/**
 * The opt-in native transport: Apache's C client through the `zookeeper` npm binding (an
 * optional peer dependency), behind the same SessionHandle as the TypeScript transport.
 */
import { Rc, ZkError, ZkErrorCode } from '../errors/errors';
import { operations } from '../operations/operations';
import { timedReply } from '../telemetry/telemetry';
import { type Logger, levelRank, nativeLineLevel } from '../transport/logger';
import type {
  Created,
  NodeData,
  OperationName,
  OperationRequest,
  OperationResult,
  Reply,
  SessionCredentials,
  SessionHandle,
  SessionListener,
  SessionOptions,
  Transport,
} from '../transport/transport';
import type { Acl } from '../znode/acl';
import { OPEN_ACL_UNSAFE } from '../znode/acl';
import type { Stat } from '../znode/stat';
import { loadNative, type NativeAcl, type NativeStat } from './addon';
import { NativeHandle } from './binding';

// Every live native session that logs: the C client's log lines are process-wide.
const logSinks = new Set<{ level: number; log: Required<Logger> }>();

function nativeLogLevel(): number {
  let level = 0;
  for (const sink of logSinks) level = Math.max(level, sink.level);
  return level;
}

function routeLog(lines: readonly string[]): void {
  for (const line of lines) {
    const level = nativeLineLevel(line);
    const text = line.trim();
    for (const sink of logSinks) sink.log[level](text, { source: 'zookeeper-c-client' });
  }
}

function toMillis(value: Date | number): number {
  return typeof value === 'number' ? value : value.getTime();
}

/** Copies the binding's Stat into a plain object. */
function toStat(stat: NativeStat): Stat {
  return {
    czxid: stat.czxid,
    mzxid: stat.mzxid,
    pzxid: stat.pzxid,
    ctime: toMillis(stat.ctime),
    mtime: toMillis(stat.mtime),
    version: stat.version,
    cversion: stat.cversion,
    aversion: stat.aversion,
    ephemeralOwner: stat.ephemeralOwner,
    dataLength: stat.dataLength,
    numChildren: stat.numChildren,
  };
}

function toNativeAcl(acl: readonly Acl[]): NativeAcl[] {
  return acl.map((entry) => ({ perm: entry.permissions, scheme: entry.scheme, auth: entry.id }));
}

function fromNativeAcl(acl: readonly NativeAcl[]): Acl[] {
  return acl.map((entry) => ({ permissions: entry.perm, scheme: entry.scheme, id: entry.auth }));
}

function unimplemented<T>(reply: Reply<T>): void {
  queueMicrotask(() => reply(Rc.unimplemented));
}

const noStat = (): ZkError =>
  new ZkError(ZkErrorCode.SystemError, 'the zookeeper binding returned no Stat');

/** One session of the C client, as a SessionHandle. */
/** How long `close()` waits for the replies of calls in flight, at most. */
const DRAIN_BOUND_MS = 2_000;

export class NativeSession implements SessionHandle {
  private readonly handle: NativeHandle;
  private readonly sink: { level: number; log: Required<Logger> } | undefined;
  private warnedStock = false;
  private closing: Promise<void> | undefined;
  private connected = false;
  /** Calls sent and not answered yet; `close()` lets them have their replies first. */
  private inFlight = 0;
  private drained: (() => void) | undefined;

  constructor(
    private readonly options: SessionOptions,
    listener: SessionListener,
  ) {
    if (options.logLevel !== 'silent') {
      this.sink = { level: levelRank(options.logLevel), log: options.log };
      logSinks.add(this.sink);
    }
    this.handle = new NativeHandle(
      {
        connect: options.connect,
        sessionTimeoutMs: options.sessionTimeoutMs,
        logLevel: nativeLogLevel(),
      },
      {
        onConnected: () => {
          this.connected = true;
          listener.onConnected(this);
        },
        onConnecting: () => {
          this.connected = false;
          listener.onDisconnected(this, undefined);
        },
        onClosed: (_handle, code) => {
          this.dropSink();
          listener.onClosed(this, code);
        },
        onWatchEvent: (_handle, event, path) => listener.onWatchEvent(this, event, path),
        onLog: routeLog,
      },
    );
    for (const auth of options.auth) {
      this.handle.addAuth(auth.scheme, auth.credentials, (rc) => {
        if (rc !== Rc.ok && rc !== Rc.closing)
          options.log.warn(`addAuth ${auth.scheme} failed`, { rc });
      });
    }
  }

  get sessionId(): string {
    return this.handle.sessionId;
  }

  get negotiatedTimeoutMs(): number {
    return this.handle.negotiatedTimeoutMs;
  }

  get readOnly(): boolean {
    return false;
  }

  get isDead(): boolean {
    return this.handle.isDead;
  }

  credentials(): SessionCredentials | undefined {
    return this.handle.credentials();
  }

  // No `updateServers`: the C client's `zoo_set_servers` closes the socket it has open (one
  // connecting, too) under the binding's poll of that descriptor, and the process aborts
  // (SIGABRT, no message: 3 runs of 9 here, following a reconfigured ensemble while
  // reconnecting). A session keeps the servers it was opened with; the client's next session
  // (after an expiry) opens on the servers followed, and the client says so once.

  close(): Promise<void> {
    if (this.closing) return this.closing;
    // The C client fails every call still pending with ZCLOSING when it closes, even those the
    // server applied: while connected, let the calls in flight have their replies first (the
    // server answers them in order), for a bounded time.
    const drained =
      this.connected && this.inFlight > 0
        ? new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, DRAIN_BOUND_MS);
            this.drained = () => {
              clearTimeout(timer);
              resolve();
            };
          })
        : Promise.resolve();
    this.closing = drained.then(
      () =>
        new Promise<void>((resolve) => {
          this.handle.close();
          // NativeHandle.close() runs the C client's close on the next turn of the event loop
          // (never inside a binding callback); setImmediate callbacks run in order, so this one
          // runs after it: the session and its ephemeral nodes are gone then. The C client's
          // close blocks the event loop until the server answers (1.5 s at most): a limit of
          // this transport.
          setImmediate(() => {
            this.dropSink();
            resolve();
          });
        }),
    );
    return this.closing;
  }

  /** A call's completion, timed (telemetry) and counted in flight until it settles. */
  private reply<T>(operation: string, reply: Reply<T>): Reply<T> {
    const done = timedReply(operation, reply);
    this.inFlight += 1;
    let settled = false;
    return (rc, value, cause) => {
      if (!settled) {
        settled = true;
        this.inFlight -= 1;
        if (this.inFlight === 0) this.drained?.();
      }
      done(rc, value, cause);
    };
  }

  private dropSink(): void {
    if (this.sink) logSinks.delete(this.sink);
  }

  /**
   * Sends one operation through the C client. It queues a request while disconnected and
   * cannot take it back: an abort reaches the caller from the client, which says the request
   * may still be sent (`signal` is not used here).
   */
  call<N extends OperationName>(
    operation: N,
    request: OperationRequest<N>,
    reply: Reply<OperationResult<N>>,
    _signal?: AbortSignal,
  ): void {
    const done = this.reply(operations[operation].wireName, reply);
    (nativeCalls[operation] as NativeCall<N>)(this, request, done);
  }

  /** @internal */
  create(request: OperationRequest<'create'>, done: Reply<Created>): void {
    const { path, data, flags, ttlMs, acl } = request;
    if (!this.handle.createsWithStat && acl !== undefined && acl !== OPEN_ACL_UNSAFE) {
      queueMicrotask(() =>
        done(
          Rc.badArguments,
          undefined,
          new Error(
            'the stock zookeeper binding always creates with the open ACL: use the default (TypeScript) transport, or setAcl after create',
          ),
        ),
      );
      return;
    }
    this.handle.create(
      path,
      data,
      flags,
      ttlMs,
      acl === undefined ? null : toNativeAcl(acl),
      (rc, created, stat) => {
        if (rc !== Rc.ok) return done(rc);
        if (stat) return done(rc, { path: created, stat: toStat(stat) });
        this.warnStock();
        // The stock binding has no create2: read the Stat (one more round trip).
        this.handle.exists(created, false, (existsRc, existing) => {
          if (existsRc === Rc.noNode) {
            return done(
              Rc.noNode,
              undefined,
              new Error(`${created} vanished right after its create`),
            );
          }
          if (existsRc !== Rc.ok) return done(existsRc);
          if (!existing) return done(Rc.systemError, undefined, noStat());
          done(Rc.ok, { path: created, stat: toStat(existing) });
        });
      },
    );
  }

  private warnStock(): void {
    if (this.warnedStock) return;
    this.warnedStock = true;
    this.options.log.warn(
      'the stock zookeeper binding returns no Stat from create: each create costs one more round trip (the default TypeScript transport does not)',
    );
  }

  /** @internal */
  get({ path, watch }: OperationRequest<'get'>, done: Reply<NodeData>): void {
    this.handle.get(path, watch, (rc, stat, data) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
    });
  }

  /** @internal */
  exists({ path, watch }: OperationRequest<'exists'>, done: Reply<Stat>): void {
    this.handle.exists(path, watch, (rc, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, toStat(stat));
    });
  }

  /** @internal */
  children(
    { path, watch }: OperationRequest<'children'>,
    done: Reply<{ children: string[]; stat: Stat }>,
  ): void {
    this.handle.children(path, watch, (rc, children, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { children: [...children], stat: toStat(stat) });
    });
  }

  /** @internal */
  set({ path, data, version }: OperationRequest<'set'>, done: Reply<Stat>): void {
    this.handle.set(path, data, version, (rc, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, toStat(stat));
    });
  }

  /** @internal */
  delete({ path, version }: OperationRequest<'delete'>, done: Reply<undefined>): void {
    this.handle.delete(path, version, (rc) => done(rc));
  }

  /** @internal */
  sync({ path }: OperationRequest<'sync'>, done: Reply<undefined>): void {
    this.handle.sync(path, (rc) => done(rc));
  }

  /** @internal */
  getAcl({ path }: OperationRequest<'getAcl'>, done: Reply<{ acl: Acl[]; stat: Stat }>): void {
    this.handle.getAcl(path, (rc, acl, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { acl: fromNativeAcl(acl), stat: toStat(stat) });
    });
  }

  /** @internal */
  setAcl({ path, version, acl }: OperationRequest<'setAcl'>, done: Reply<Stat>): void {
    // The binding answers no Stat: the client reports none.
    this.handle.setAcl(path, version, toNativeAcl(acl), (rc) => done(rc));
  }

  /** @internal */
  getConfig({ watch }: OperationRequest<'getConfig'>, done: Reply<NodeData>): void {
    this.handle.getConfig(watch, (rc, stat, data) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
    });
  }
}

type NativeCall<N extends OperationName> = (
  session: NativeSession,
  request: OperationRequest<N>,
  done: Reply<OperationResult<N>>,
) => void;

/** What the binding lacks: the client's error names the default transport. */
function lacking<N extends OperationName>(): NativeCall<N> {
  return (_session, _request, done) => unimplemented(done);
}

/** Each operation of the table, on the C client. */
const nativeCalls: { readonly [N in OperationName]: NativeCall<N> } = {
  create: (session, request, done) => session.create(request, done),
  get: (session, request, done) => session.get(request, done),
  exists: (session, request, done) => session.exists(request, done),
  children: (session, request, done) => session.children(request, done),
  set: (session, request, done) => session.set(request, done),
  delete: (session, request, done) => session.delete(request, done),
  sync: (session, request, done) => session.sync(request, done),
  getAcl: (session, request, done) => session.getAcl(request, done),
  setAcl: (session, request, done) => session.setAcl(request, done),
  getConfig: (session, request, done) => session.getConfig(request, done),
  multi: lacking(),
  getAllChildrenNumber: lacking(),
  getEphemerals: lacking(),
  whoAmI: lacking(),
  addWatch: lacking(),
  removeWatches: lacking(),
};

/** What the default transport is, for the errors that send a user back to it. */
const DEFAULT_TRANSPORT =
  "the default transport (zkrx's own, in TypeScript: leave `transport` out of createClient's options) runs on every Node line";

/**
 * Why `nativeTransport()` cannot run here, and what to do: the stock binding (zookeeper 7.3, a
 * NAN addon: V8's C++ API) builds on Node 22 and 24 and not on Node 26 (V8 14), is compiled for
 * the one Node that installed it, and does not load on Bun or Deno (Node-API addons only).
 */
export function bindingUnavailable(
  error: Error,
  versions: Partial<Record<'node' | 'bun' | 'deno', string>> = process.versions,
): string {
  const node = versions.node ?? '?';
  const notInstalled =
    (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
    /zookeeper\/package\.json|'zookeeper'/.test(error.message);
  let why: string;
  if (versions.bun || versions.deno) {
    const runtime = versions.bun ? `Bun ${versions.bun}` : `Deno ${versions.deno}`;
    why = `the zookeeper binding does not run on ${runtime}: it is a NAN addon, and ${runtime} loads Node-API addons only`;
  } else if (Number(node.split('.')[0]) >= 26) {
    why = `the zookeeper binding does not run on Node ${node}: zookeeper 7.3, a NAN addon, builds on Node 22 and 24, not on Node 26`;
  } else if (notInstalled) {
    why =
      'the zookeeper binding is not installed (npm install zookeeper: it compiles for this Node)';
  } else {
    why = `cannot load the zookeeper binding on Node ${node} (it is compiled for the Node that installed it: npm rebuild zookeeper)`;
  }
  return `nativeTransport(): ${why}; ${DEFAULT_TRANSPORT}. ${error.message}`;
}

/**
 * The native transport: Apache's C client through the `zookeeper` npm binding, which must be
 * installed beside `@zkrx/core` (it compiles the C client at install). No TLS, no read-only
 * mode, no transactions, persistent watches, `getEphemerals`, `getAllChildrenNumber` or
 * `whoAmI` (those reject with `Unimplemented`); `close()` blocks the event loop until the
 * server answers (1.5 s at most).
 *
 * ## Example
 * ```ts
 * import { createClient } from '@zkrx/core';
 * import { nativeTransport } from '@zkrx/core/native';
 *
 * const client = createClient({ connect: '127.0.0.1:2181', transport: nativeTransport() });
 * ```
 *
 * @return A transport whose sessions are C client handles.
 */
export function nativeTransport(): Transport {
  try {
    loadNative();
  } catch (error) {
    throw new ZkError(ZkErrorCode.SystemError, bindingUnavailable(error as Error), {
      cause: error,
    });
  }
  return {
    name: 'native',
    open(options, listener) {
      if (options.tls) {
        throw new ZkError(
          ZkErrorCode.BadArguments,
          'createClient: tls needs the default (TypeScript) transport; the native transport has no TLS',
        );
      }
      if (options.sasl) {
        throw new ZkError(
          ZkErrorCode.BadArguments,
          'createClient: sasl needs the default (TypeScript) transport',
        );
      }
      if (options.canBeReadOnly) {
        throw new ZkError(
          ZkErrorCode.BadArguments,
          'createClient: canBeReadOnly needs the default (TypeScript) transport',
        );
      }
      return new NativeSession(options, listener);
    },
  };
}
