/**
 * The one module that touches the `zookeeper` native binding (Apache's C client): typed calls,
 * and guards against its traps (use after close, completions that run inside `close()`).
 */
import { Rc } from '../errors/errors';
import type { Code, NativeAcl, NativeInitOptions, NativeStat, NativeZooKeeper } from './addon';
import { loadNative } from './addon';

/**
 * How many wake-ups in a row without a complete response the binding tolerates before closing
 * the handle as expired (its default is 10). Moving 1 MiB nodes takes up to ~15 here; a poll
 * that spins on a socket with nothing to read (e.g. a stale registration) is still cut short.
 */
const NO_RESPONSE_LIMIT = 10_000;

/** zookeeper.h `ZOO_CONNECTED_STATE`, as the binding's `state` reports it. */
const ZOO_CONNECTED_STATE = 3;

/** C client log levels (zookeeper.h `ZooLogLevel`). 0 silences it. */
export const NativeLogLevel = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 } as const;

/** Watch event types of the C client, as the binding names them. */
export type NativeWatchEvent = 'created' | 'deleted' | 'changed' | 'child' | 'notwatching';

/** What the owner of a handle hears from it. */
export interface HandleListener {
  onConnected(handle: NativeHandle): void;
  onConnecting(handle: NativeHandle): void;
  /** The handle is dead: `code` is 0 (closed by us), -112 (expired) or -113/-115 (auth failed). */
  onClosed(handle: NativeHandle, code: number): void;
  onWatchEvent(handle: NativeHandle, event: NativeWatchEvent, path: string): void;
  onLog(lines: readonly string[]): void;
}

export interface OpenHandleOptions {
  connect: string;
  sessionTimeoutMs: number;
  logLevel: number;
  session?: { id: string; password: string };
}

/** The session credentials a handle holds (hex strings, as the C client prints them). */
export interface NativeSessionCredentials {
  sessionId: string;
  password: string;
}

/**
 * One C client handle (one ZooKeeper session at most). Once closed, by us or because its
 * session expired, every call fails at once with `Rc.closing` and never reaches the binding.
 */
export class NativeHandle {
  private readonly native: NativeZooKeeper;
  private dead = false;
  /** Whether the owner was last told 'connected' (so a disconnection must be reported once). */
  private connectedReported = false;
  private readonly listener: HandleListener;

  constructor(options: OpenHandleOptions, listener: HandleListener) {
    const Native = loadNative();
    this.native = new Native();
    this.listener = listener;
    this.native.emit = (event, _self, argument) => this.dispatch(event, argument);
    const init: NativeInitOptions = {
      connect: options.connect,
      timeout: options.sessionTimeoutMs,
      debug_level: options.logLevel,
      host_order_deterministic: false,
      data_as_buffer: true,
      // The binding closes the handle as *expired* once zookeeper_process has returned "nothing
      // complete yet" more than this many times in a row (default 10). Reading or writing a
      // large node (hundreds of KiB) takes more partial reads than that, so the session was
      // reported expired, renewed, and the retried write expired it again. The C client's own
      // timeouts still detect a dead connection.
      response_counter_limit: NO_RESPONSE_LIMIT,
    };
    if (options.session) {
      init.client_id = options.session.id;
      init.client_password = options.session.password;
    }
    this.native.init(init);
  }

  /** True when the binding has `a_create2` (zkrx's patch): creates return the new node's Stat. */
  get createsWithStat(): boolean {
    return typeof this.native.a_create2 === 'function';
  }

  get isDead(): boolean {
    return this.dead;
  }

  /** The session id as hex (`0` before the first connection). */
  get sessionId(): string {
    return this.dead ? '0' : this.native.client_id;
  }

  /** The negotiated session timeout, or -1 when unknown. */
  get negotiatedTimeoutMs(): number {
    return this.dead ? -1 : this.native.timeout;
  }

  credentials(): NativeSessionCredentials | undefined {
    if (this.dead) return undefined;
    const sessionId = this.native.client_id;
    if (!sessionId || sessionId === '0') return undefined;
    return { sessionId, password: this.native.client_password };
  }

  /**
   * Closes the session (sends closeSession when connected). The handle is dead at once; the C
   * client's close runs on the next turn of the event loop, because this may be called from
   * JavaScript running inside one of its callbacks (promise reactions included), and closing
   * there frees the handle under the C client's feet (the "use after close" crash).
   */
  close(): void {
    if (this.dead) return;
    this.dead = true;
    setImmediate(() => {
      try {
        this.native.close();
      } finally {
        this.drainLog();
      }
    });
  }

  create(
    path: string,
    data: Buffer | null,
    flags: number,
    ttlMs: number,
    acl: NativeAcl[] | null,
    cb: (rc: Code, path: string, stat: NativeStat | null) => void,
  ): void {
    const native = this.native;
    this.send(cb, ['', null], (done) => {
      if (native.a_create2) {
        return native.a_create2(path, data, flags, ttlMs, acl, (rc, _e, p, stat) =>
          done(rc, p, stat),
        );
      }
      // Stock binding: no Stat from create, no ACL (always OPEN_ACL_UNSAFE).
      const bytes = data ?? Buffer.alloc(0);
      const onCreated = (rc: Code, _e: string, p: string) => done(rc, p, null);
      return ttlMs > 0
        ? native.a_create_ttl(path, bytes, flags, ttlMs, onCreated)
        : native.a_create(path, bytes, flags, onCreated);
    });
  }

  exists(path: string, watch: boolean, cb: (rc: Code, stat: NativeStat | null) => void): void {
    this.send(cb, [null], (done) =>
      this.native.a_exists(path, watch, (rc, _e, stat) => done(rc, stat)),
    );
  }

  get(
    path: string,
    watch: boolean,
    cb: (rc: Code, stat: NativeStat | null, data: Buffer | null) => void,
  ): void {
    this.send(cb, [null, null], (done) =>
      this.native.a_get(path, watch, (rc, _e, stat, data) => done(rc, stat, data)),
    );
  }

  children(
    path: string,
    watch: boolean,
    cb: (rc: Code, children: string[], stat: NativeStat | null) => void,
  ): void {
    this.send(cb, [[], null], (done) =>
      this.native.a_get_children2(path, watch, (rc, _e, children, stat) =>
        done(rc, children ?? [], stat),
      ),
    );
  }

  set(
    path: string,
    data: Buffer,
    version: number,
    cb: (rc: Code, stat: NativeStat | null) => void,
  ): void {
    this.send(cb, [null], (done) =>
      this.native.a_set(path, data, version, (rc, _e, stat) => done(rc, stat)),
    );
  }

  delete(path: string, version: number, cb: (rc: Code) => void): void {
    this.send(cb, [], (done) => this.native.a_delete_(path, version, (rc) => done(rc)));
  }

  sync(path: string, cb: (rc: Code) => void): void {
    this.send(cb, [], (done) => this.native.a_sync(path, (rc) => done(rc)));
  }

  /**
   * Reads a node's ACL. The stock binding's `a_get_acl` completion frees the ACL list without
   * checking it, and the C client passes none when the call fails: a failed `a_get_acl` (NoNode,
   * NoAuth, a connection lost or a handle closed mid-call) crashes the process. zkrx's patch of
   * the binding fixes that; with the stock binding the call is only made while connected and
   * after a `get` of the same node succeeded (a failure there is reported instead), which leaves
   * a failure within the round trip of `a_get_acl` itself, and answers NoAuth to a session with
   * ADMIN but not READ on the node.
   */
  getAcl(path: string, cb: (rc: Code, acl: NativeAcl[], stat: NativeStat | null) => void): void {
    const done = once(cb);
    if (this.dead) return done(Rc.closing, [], null);
    const read = () =>
      this.check(
        // The binding names the permissions `perms` here (and reads `perm` on the way in).
        this.native.a_get_acl(path, (aclRc, _e, acl, stat) =>
          done(
            aclRc,
            (acl ?? []).map((entry) => ({
              perm: entry.perms,
              scheme: entry.scheme,
              auth: entry.auth,
            })),
            stat,
          ),
        ),
        done,
      );
    if (this.createsWithStat) return read();
    if (!this.isConnectedNow()) {
      queueMicrotask(() => done(Rc.connectionLoss, [], null));
      return;
    }
    this.check(
      this.native.a_get(path, false, (rc) => {
        if (rc !== Rc.ok) return done(rc, [], null);
        if (this.dead) return done(Rc.closing, [], null);
        if (!this.isConnectedNow()) return done(Rc.connectionLoss, [], null);
        read();
      }),
      done,
    );
  }

  setAcl(path: string, version: number, acl: NativeAcl[], cb: (rc: Code) => void): void {
    this.send(cb, [], (done) => this.native.a_set_acl(path, version, acl, (rc) => done(rc)));
  }

  /** Reads the ensemble's configuration node; `Rc.unimplemented` without `a_getconfig`. */
  getConfig(watch: boolean, cb: (rc: Code, stat: NativeStat | null, data: Buffer | null) => void) {
    const done = once(cb);
    if (this.dead) return done(Rc.closing, null, null);
    const getconfig = this.native.a_getconfig;
    if (typeof getconfig !== 'function') {
      queueMicrotask(() => done(Rc.unimplemented, null, null));
      return;
    }
    this.check(
      getconfig.call(this.native, watch, (rc, _e, stat, data) => done(rc, stat, data)),
      done,
    );
  }

  addAuth(scheme: string, credentials: string, cb: (rc: Code) => void): void {
    this.send(cb, [], (done) => this.native.add_auth(scheme, credentials, (rc) => done(rc)));
  }

  /**
   * One call to the binding: its completion reported to `cb` at most once; at once with
   * `Rc.closing` (and `closed`) when the handle is dead, without reaching the binding.
   *
   * @param call Makes the call, completing through `done`; returns the binding's synchronous code.
   */
  private send<A extends unknown[]>(
    cb: (rc: Code, ...values: A) => void,
    closed: A,
    call: (done: (rc: Code, ...values: A | []) => void) => Code,
  ): void {
    const done = once(cb);
    if (this.dead) return done(Rc.closing, ...closed);
    this.check(call(done), done);
  }

  /** True while the C client holds an established connection (zookeeper.h `ZOO_CONNECTED_STATE`). */
  private isConnectedNow(): boolean {
    return !this.dead && this.native.state === ZOO_CONNECTED_STATE;
  }

  /** A call the C client refused synchronously never runs its completion: report it now. */
  private check(rc: Code, done: (rc: Code) => void): void {
    if (rc !== Rc.ok) {
      const code = this.dead ? Rc.closing : rc;
      queueMicrotask(() => done(code));
    }
    this.noticeSilentDisconnect();
  }

  /**
   * A call that meets a broken connection makes the C client close its socket without a session
   * event (its nonblocking_send): it then reconnects, and during a partition every attempt fails
   * before queued events are delivered, so nobody would hear of the disconnection for as long as
   * the partition lasts. Report it ourselves when a call leaves the handle not connected.
   */
  private noticeSilentDisconnect(): void {
    if (!this.connectedReported || this.dead || this.native.state === ZOO_CONNECTED_STATE) return;
    this.connectedReported = false;
    queueMicrotask(() => {
      if (!this.dead && !this.connectedReported) this.listener.onConnecting(this);
    });
  }

  private dispatch(event: string, argument: unknown): void {
    switch (event) {
      case 'connect':
        this.connectedReported = true;
        if (!this.dead) this.listener.onConnected(this);
        return;
      case 'connecting':
        if (!this.connectedReported) return;
        this.connectedReported = false;
        if (!this.dead) this.listener.onConnecting(this);
        return;
      case 'close': {
        this.dead = true;
        this.drainLog();
        // Completions of pending calls ran inside the C client's close: let the owner react
        // after the binding has returned, never from inside it.
        const code = typeof argument === 'number' ? argument : 0;
        // The C client is still on the stack: react on the next turn of the event loop.
        setImmediate(() => this.listener.onClosed(this, code));
        return;
      }
      case 'log':
        this.drainLog();
        return;
      case 'created':
      case 'deleted':
      case 'changed':
      case 'child':
      case 'notwatching':
        if (!this.dead && typeof argument === 'string') {
          this.listener.onWatchEvent(this, event, argument);
        }
        return;
      default:
        return;
    }
  }

  private drainLog(): void {
    const take = this.native.take_log;
    if (typeof take !== 'function') return;
    const lines = take.call(this.native);
    if (lines.length > 0) this.listener.onLog(lines);
  }
}

/**
 * A completion that runs at most once: the C client may both refuse a call and, rarely, complete
 * it. Called with the code alone (a call refused), `cb` gets its values undefined.
 */
function once<A extends unknown[]>(
  cb: (rc: Code, ...values: A) => void,
): (rc: Code, ...values: A | []) => void {
  let called = false;
  return (rc, ...values) => {
    if (called) return;
    called = true;
    cb(rc, ...(values as A));
  };
}
