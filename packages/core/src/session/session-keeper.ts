/**
 * The client's session over a transport's handles: one handle a session, a new one after the
 * server said the session expired, and the states every subscriber of `session$` sees.
 */
import { BehaviorSubject, distinctUntilChanged, filter, map, type Observable } from 'rxjs';
import { Rc, ZkError, ZkErrorCode } from '../errors/errors';
import { coreTelemetry } from '../telemetry/telemetry';
import type { Logger } from '../transport/logger';
import type {
  SessionHandle,
  SessionListener,
  SessionOptions,
  Transport,
  WatchEventType,
} from '../transport/transport';
import {
  isConnectedState,
  isReadWriteState,
  isTerminalState,
  type SessionEvent,
  type SessionState,
} from './session-state';

/** What the keeper tells the rest of the client. */
export interface SessionHooks {
  /** A new session replaced an expired one (watches must be read again). */
  onNewSession(): void;
  /** The same session is back after a lost connection. */
  onReconnected(): void;
  /** A watch event of the current session, delivered in wire order. */
  onWatchEvent(type: WatchEventType, path: string): void;
  /** The server refused the credentials: the client closes itself. */
  onAuthFailed(): void;
  /** A connection is established (a new session, a reconnection, read-only or not) on `server`. */
  onConnection(server: string | undefined, readOnly: boolean): void;
  /** The connection is lost (the session may live: `suspended`). */
  onConnectionLost(): void;
  /**
   * The session moved to `server` by itself (following the ensemble), never suspended: the
   * watches without a replay (trees) read again, as after a reconnection.
   */
  onMoved(server: string | undefined, how: 'planned' | 'hand-off'): void;
}

/**
 * Keeps a client's session: opens a transport handle, follows what it reports, and opens the
 * next one when the server says the session expired.
 */
export class SessionKeeper {
  /** Replays the latest `{ state, sessionId }`, then every change; completes on close. */
  readonly session$: Observable<SessionEvent>;
  private readonly subject = new BehaviorSubject<SessionEvent>({
    state: 'connecting',
    sessionId: undefined,
  });
  private current: SessionHandle | undefined;
  private connectedOnHandle = false;
  private everConnected = false;
  private closed = false;
  /** performance.now() when the client last stopped being read-write connected. */
  private leftReadWriteAt = 0;
  private readonly listener: SessionListener;

  /**
   * @param connect The connect string of the next handle: the client's, or after an expiry the
   *   servers it follows (the chroot kept).
   */
  constructor(
    private readonly transport: Transport,
    private readonly sessionOptions: SessionOptions,
    private readonly log: Required<Logger>,
    private readonly hooks: SessionHooks,
    private readonly connect: () => string = () => sessionOptions.connect,
  ) {
    this.session$ = this.subject.asObservable();
    this.listener = {
      onConnected: (handle) => this.onConnected(handle),
      onDisconnected: (handle) => this.onDisconnected(handle),
      onMoved: (handle, how) => this.onMoved(handle, how),
      onClosed: (handle, rc) => this.onHandleClosed(handle, rc),
      onWatchEvent: (handle, type, path) => this.onWatchEvent(handle, type, path),
    };
    this.openHandle();
  }

  get state(): SessionState {
    return this.subject.value.state;
  }

  get sessionId(): string | undefined {
    return this.subject.value.sessionId;
  }

  /** The handle calls go to (undefined once closed). */
  get handle(): SessionHandle | undefined {
    return this.current;
  }

  /**
   * performance.now() before which the ensemble surely last heard from the session: the
   * transport's own answer (`SessionHandle.heardAt`), or — for one that cannot tell — the least
   * a transport that drops a connection after two thirds of the timeout without an answer
   * guarantees: two thirds of `timeoutMs` before now while read-write connected, before the
   * moment it stopped being so otherwise.
   */
  heardAt(timeoutMs: number): number {
    const known = this.current?.heardAt;
    if (known !== undefined) return known;
    const since = isReadWriteState(this.state) ? performance.now() : this.leftReadWriteAt;
    return since - (timeoutMs * 2) / 3;
  }

  /** Whether a session was ever established: before that, calls wait for the first. */
  get hadSession(): boolean {
    return this.everConnected;
  }

  /**
   * Calls `done` once connected (no error), or with ConnectTimeout after `timeoutMs`,
   * AuthFailed, or ClientClosed; returns a cancel function.
   */
  untilConnected(
    timeoutMs: number,
    operation: string,
    connectString: string,
    done: (error?: ZkError) => void,
  ): () => void {
    if (isConnectedState(this.state)) {
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
    const closed = () =>
      new ZkError(ZkErrorCode.ClientClosed, `${operation}: the client is closed`);
    timer = setTimeout(
      () =>
        finish(
          new ZkError(
            ZkErrorCode.ConnectTimeout,
            `${operation}: no connection to ZooKeeper at ${connectString} within ${Math.round(timeoutMs)} ms`,
          ),
        ),
      Math.max(0, timeoutMs),
    );
    subscription = this.subject.subscribe({
      next: (event) => {
        if (isConnectedState(event.state)) finish();
        else if (event.state === 'auth-failed') {
          finish(new ZkError(ZkErrorCode.AuthFailed, 'ZooKeeper refused the credentials'));
        } else if (event.state === 'closed') finish(closed());
      },
      complete: () => finish(closed()),
    });
    if (finished) subscription.unsubscribe();
    return () => {
      finished = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
    };
  }

  /** Calls back once calls can reach the server again; returns a cancel function. */
  whenConnected(callback: () => void): () => void {
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
    const subscription = this.subject
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

  /**
   * Says `closed` — before the session goes, so whatever holds a lock or leadership stops its
   * work while its ephemeral nodes still exist — then closes the session (its ephemeral nodes
   * go once this resolves, when it was connected).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.setState('closed', this.sessionId);
    const handle = this.current;
    this.current = undefined;
    await handle?.close();
  }

  /** Completes `session$` (the client is gone). */
  complete(): void {
    this.subject.complete();
  }

  private openHandle(): void {
    if (this.closed) return;
    this.connectedOnHandle = false;
    this.current = this.transport.open(
      { ...this.sessionOptions, connect: this.connect() },
      this.listener,
    );
    if (this.state !== 'connecting') this.setState('connecting', undefined);
  }

  private setState(state: SessionState, sessionId: string | undefined, server?: string): void {
    const before = this.subject.value.state;
    if (isTerminalState(before)) return;
    if (isReadWriteState(before) && !isReadWriteState(state)) {
      this.leftReadWriteAt = performance.now();
    }
    this.log.debug(`session ${state}`, server ? { sessionId, server } : { sessionId });
    const telemetry = coreTelemetry();
    telemetry.sessionStateChanges.add(1, telemetry.stateAttributes(state, server));
    this.subject.next({ state, sessionId });
  }

  private onConnected(handle: SessionHandle): void {
    if (handle !== this.current || this.closed) return;
    // A handle's session id changes only when a read-only (local) session moves to a read-write
    // server, which starts a session of its own: for the client that is a new session.
    const newSession = this.connectedOnHandle && handle.sessionId !== this.sessionId;
    if (!this.connectedOnHandle || newSession) {
      this.connectedOnHandle = true;
      const renewed = this.everConnected;
      this.everConnected = true;
      this.setState(handle.readOnly ? 'read-only' : 'connected', handle.sessionId, handle.server);
      if (renewed) this.hooks.onNewSession();
    } else {
      // A read-only server answers from a copy cut off from the quorum: it confirms nothing
      // of the session (`read-only`), until a read-write server takes it back (`reconnected`).
      this.setState(handle.readOnly ? 'read-only' : 'reconnected', handle.sessionId, handle.server);
      this.hooks.onReconnected();
    }
    this.hooks.onConnection(handle.server, handle.readOnly);
  }

  /**
   * The handle moved its session to another server by itself: no state changes (the session
   * was never in doubt: planned-move.ts says why).
   */
  private onMoved(handle: SessionHandle, how: 'planned' | 'hand-off'): void {
    if (handle !== this.current || this.closed) return;
    this.log.debug(how === 'planned' ? 'session moved' : 'session back after a hand-off', {
      sessionId: handle.sessionId,
      server: handle.server,
    });
    this.hooks.onMoved(handle.server, how);
  }

  private onDisconnected(handle: SessionHandle): void {
    if (handle !== this.current || this.closed) return;
    if (!this.connectedOnHandle || this.state === 'suspended') return;
    // The session lives on the server until it says otherwise: ZooKeeper decides expiry, and
    // after a quorum loss the new leader restarts every session's clock. So the client stays
    // `suspended`, reconnecting, until it is `reconnected` or the server answers "expired" —
    // as Apache's Java client (3.8) does. Holders follow `suspended` (the recipes' default
    // gives up at once; `onSuspended: 'continue'` before the servers could expire the session,
    // on the clock of `sessionSurvivesMs`).
    this.setState('suspended', handle.sessionId);
    this.hooks.onConnectionLost();
  }

  private onHandleClosed(handle: SessionHandle, rc: number): void {
    if (handle !== this.current || this.closed) return;
    if (rc === Rc.authFailed || rc === Rc.invalidCallback) {
      this.current = undefined;
      this.setState('auth-failed', this.sessionId);
      this.log.error('ZooKeeper refused the credentials: the client is closed');
      this.hooks.onAuthFailed();
      return;
    }
    // The server said the session is gone: a new one starts. The session's id as session$
    // last reported it (the handle's own may already read '0').
    const sessionId = this.sessionId;
    this.current = undefined;
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
      if (handle !== this.current) return;
      this.hooks.onWatchEvent(type, path);
    });
  }
}
