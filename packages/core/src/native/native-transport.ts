/**
 * The opt-in native transport: Apache's C client through the `zookeeper` npm binding (an
 * optional peer dependency), behind the same SessionHandle as the TypeScript transport.
 */
import type { Acl } from '../acl';
import { OPEN_ACL_UNSAFE } from '../acl';
import { Rc, ZkError, ZkErrorCode } from '../errors';
import { type Logger, levelRank, nativeLineLevel } from '../logger';
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
  Transport,
  TransportOp,
  TransportOpResult,
} from '../transport';
import { loadNative, type NativeAcl, NativeHandle, type NativeStat } from './binding';

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

  create(
    path: string,
    data: Buffer,
    flags: number,
    ttlMs: number,
    acl: readonly Acl[] | undefined,
    reply: Reply<Created>,
  ): void {
    const done = this.reply('create', reply);
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

  get(path: string, watch: boolean, reply: Reply<NodeData>): void {
    const done = this.reply('getData', reply);
    this.handle.get(path, watch, (rc, stat, data) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
    });
  }

  exists(path: string, watch: boolean, reply: Reply<Stat>): void {
    const done = this.reply('exists', reply);
    this.handle.exists(path, watch, (rc, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, toStat(stat));
    });
  }

  children(path: string, watch: boolean, reply: Reply<{ children: string[]; stat: Stat }>): void {
    const done = this.reply('getChildren', reply);
    this.handle.children(path, watch, (rc, children, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { children: [...children], stat: toStat(stat) });
    });
  }

  set(path: string, data: Buffer, version: number, reply: Reply<Stat>): void {
    const done = this.reply('setData', reply);
    this.handle.set(path, data, version, (rc, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, toStat(stat));
    });
  }

  delete(path: string, version: number, reply: Reply<void>): void {
    const done = this.reply('delete', reply);
    this.handle.delete(path, version, (rc) => done(rc));
  }

  sync(path: string, reply: Reply<void>): void {
    const done = this.reply('sync', reply);
    this.handle.sync(path, (rc) => done(rc));
  }

  getAcl(path: string, reply: Reply<{ acl: Acl[]; stat: Stat }>): void {
    const done = this.reply('getACL', reply);
    this.handle.getAcl(path, (rc, acl, stat) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { acl: fromNativeAcl(acl), stat: toStat(stat) });
    });
  }

  setAcl(path: string, version: number, acl: readonly Acl[], reply: Reply<Stat | undefined>) {
    const done = this.reply('setACL', reply);
    this.handle.setAcl(path, version, toNativeAcl(acl), (rc) => done(rc));
  }

  getConfig(watch: boolean, reply: Reply<NodeData>): void {
    const done = this.reply('getData', reply);
    this.handle.getConfig(watch, (rc, stat, data) => {
      if (rc !== Rc.ok) return done(rc);
      if (!stat) return done(Rc.systemError, undefined, noStat());
      done(rc, { data: data ?? Buffer.alloc(0), stat: toStat(stat) });
    });
  }

  // What the binding lacks: the client's error names the default transport.

  multi(_ops: readonly TransportOp[], reply: Reply<TransportOpResult[]>): void {
    unimplemented(reply);
  }

  getAllChildrenNumber(_path: string, reply: Reply<number>): void {
    unimplemented(reply);
  }

  getEphemerals(_prefix: string, reply: Reply<string[]>): void {
    unimplemented(reply);
  }

  whoAmI(reply: Reply<ClientInfo[]>): void {
    unimplemented(reply);
  }

  addWatch(_path: string, _mode: PersistentWatchMode, reply: Reply<void>): void {
    unimplemented(reply);
  }

  removeWatches(_path: string, _type: number, reply: Reply<void>): void {
    unimplemented(reply);
  }
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
    throw new ZkError(
      ZkErrorCode.SystemError,
      `nativeTransport(): cannot load the zookeeper binding (install it: npm install zookeeper): ${(error as Error).message}`,
      { cause: error },
    );
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
