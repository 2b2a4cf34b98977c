/**
 * One ZooKeeper session as the recipes read it (etcd's `concurrency.Session`): the id its holds
 * belong to, whether its connection is up, and a done signal that fires once, with why it ended
 * for them. The recipes read `client.session$` only here: one subscription per client.
 */
import { setMaxListeners } from 'node:events';
import {
  isReadWriteState,
  type SessionEvent,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { BehaviorSubject, type Observable } from 'rxjs';

/**
 * Why a session ended for its holders: `session-expired` (the server ended it, or the client
 * moved to a new session: its ephemeral nodes are gone), `suspended` (its connection was lost
 * and the policy gives up on that), `closed` (`client.close()`, or refused credentials).
 */
export type SessionEnd = 'session-expired' | 'suspended' | 'closed';

/**
 * What a suspension (the connection lost, or only a read-only server reachable: the session
 * perhaps alive) does to a view: `release` ends it at once; `continue` ends it once the servers
 * may be about to expire the session — a session timeout, less a sixth of it kept in hand,
 * after the latest request they answered was sent (`ZkClient.sessionSurvivesMs`), which is
 * before the suspension itself (the connection is declared lost only after a silence); `wait`
 * never (a waiter in a queue: only the session's end matters to it). The client keeps a
 * suspended session until the server says it expired (a quorum loss restarts the servers'
 * clocks, so a session can outlive a long cut); `continue` gives up before the servers could
 * have expired it, whatever happens after — the safe side of not knowing.
 */
export type SuspensionPolicy = 'release' | 'continue' | 'wait';

/**
 * The part of the session timeout a view keeps in hand: it gives up (policies `release` and
 * `continue`) once the servers are within a sixth of the timeout of possibly expiring the
 * session — the same point at which the client's heartbeat drops a connection that could not
 * renew it (core's `protocol/heartbeat.ts`), so that holders stop in time for the event loop to
 * carry the news.
 */
const SESSION_MARGIN = 1 / 6;

/** Where a session stands for its holders: connected, suspended (under the policy), or over. */
export type SessionStatus = 'connected' | 'suspended' | 'ended';

export interface SessionOptions {
  /** The session (hex, as `client.sessionId` and `Stat.ephemeralOwner` write it); default: the current one. */
  readonly id?: string;
  /** What a suspension does (default `release`). */
  readonly onSuspended?: SuspensionPolicy;
}

/**
 * The view of one session of one client under one suspension policy. Shared: every hold of that
 * session under that policy reads the same view (and a `continue` view counts a suspension from
 * its start, whoever looks later).
 */
export interface Session {
  readonly client: ZkClient;
  /** The session's id (hex): the `ephemeralOwner` of the nodes it holds. */
  readonly id: string;
  /** What a suspension does to this view. */
  readonly onSuspended: SuspensionPolicy;
  /** Where the session stands, as last heard from the client. */
  readonly status: SessionStatus;
  /**
   * Where the session stands now, the clock read: a view whose policy gives up on suspension
   * (`release`, `continue`) ends at once when the servers may be about to expire the session,
   * even though the client did not say so yet — after a stall of this process, the client's
   * heartbeat only says so at its next check. What writes under a hold asks this first.
   */
  statusNow(): SessionStatus;
  /** Why it ended, once it has. */
  readonly ended: SessionEnd | undefined;
  /**
   * How many times its connection was lost while it lived: a reply and a watch event on one
   * connection come in the order of the changes, on two connections they need not
   * (`OwnNodeWatch.mayTrust`).
   */
  readonly suspensions: number;
  /**
   * Emits the status now (`connected` or `suspended`) and on every change while the session
   * lives; completes when it ends (at once for a view born ended): `ended` then says why.
   */
  readonly status$: Observable<'connected' | 'suspended'>;
  /**
   * Aborts once the session ends, with a ZkError saying why: `SessionExpired`, `ConnectionLoss`
   * (`suspended`) or `ClientClosed`.
   */
  readonly signal: AbortSignal;
}

/** A session view, kept up to date by its client's {@link ClientSessions}. */
class SessionView implements Session {
  private readonly status$$: BehaviorSubject<'connected' | 'suspended'>;
  private endedWith: SessionEnd | undefined;
  private controller: AbortController | undefined;
  private suspendTimer: ReturnType<typeof setTimeout> | undefined;
  private lost = 0;
  readonly status$: Observable<'connected' | 'suspended'>;

  constructor(
    readonly client: ZkClient,
    readonly id: string,
    readonly onSuspended: SuspensionPolicy,
    private readonly forget: () => void,
  ) {
    this.status$$ = new BehaviorSubject<'connected' | 'suspended'>('connected');
    this.status$ = this.status$$.asObservable();
  }

  get status(): SessionStatus {
    return this.endedWith ? 'ended' : this.status$$.value;
  }

  statusNow(): SessionStatus {
    if (!this.endedWith && this.onSuspended !== 'wait' && this.givesUpInMs() <= 0) {
      this.end('suspended');
    }
    return this.status;
  }

  /**
   * How long until the servers may be about to expire the session, with a sixth of its timeout
   * kept in hand (the client's heartbeat drops a connection at the same point: see core's
   * `SESSION_MARGIN`). Infinity when the client cannot tell (no current session of this id).
   */
  private givesUpInMs(): number {
    const survives = this.client.sessionSurvivesMs;
    if (survives === undefined || this.client.sessionId !== this.id)
      return Number.POSITIVE_INFINITY;
    return survives - this.client.sessionTimeoutMs * SESSION_MARGIN;
  }

  get ended(): SessionEnd | undefined {
    return this.endedWith;
  }

  get suspensions(): number {
    return this.lost;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // One view serves every hold of its session: as many listeners as there are holds.
      setMaxListeners(0, this.controller.signal);
      if (this.endedWith) this.controller.abort(this.reasonOf(this.endedWith));
    }
    return this.controller.signal;
  }

  /** What the client said: `state` and `sessionId` as `session$` emits them. */
  observe({ state, sessionId }: SessionEvent): void {
    if (this.endedWith) return;
    if (state === 'closed' || state === 'auth-failed') return this.end('closed');
    if (state === 'expired' || state === 'connecting') return this.end('session-expired');
    if (sessionId !== undefined && sessionId !== this.id) return this.end('session-expired');
    // A read-only server answers from a copy cut off from the quorum, which may be expiring the
    // session meanwhile: what it says of the session's nodes confirms nothing (Java reports it
    // apart, `ConnectedReadOnly`). For holders it is a suspension.
    if (state === 'suspended' || state === 'read-only') {
      if (this.status$$.value === 'suspended') return;
      this.lost += 1;
      if (this.onSuspended === 'release') return this.end('suspended');
      if (this.onSuspended === 'continue') {
        // Timed from when the servers last surely heard from the session, not from now: the
        // connection was declared lost only after a silence, which the session's clock counted.
        const inMs = this.givesUpInMs();
        if (inMs <= 0) return this.end('suspended');
        if (Number.isFinite(inMs)) {
          this.suspendTimer = setTimeout(() => {
            this.suspendTimer = undefined;
            this.end('suspended');
          }, inMs);
        }
      }
      this.status$$.next('suspended');
      return;
    }
    if (isReadWriteState(state) && this.status$$.value !== 'connected') {
      clearTimeout(this.suspendTimer);
      this.suspendTimer = undefined;
      this.status$$.next('connected');
    }
  }

  end(why: SessionEnd): void {
    if (this.endedWith) return;
    this.endedWith = why;
    clearTimeout(this.suspendTimer);
    this.suspendTimer = undefined;
    this.forget();
    this.controller?.abort(this.reasonOf(why));
    this.status$$.complete();
  }

  private reasonOf(why: SessionEnd): ZkError {
    switch (why) {
      case 'closed':
        return new ZkError(ZkErrorCode.ClientClosed, `session ${this.id}: the client is closed`);
      case 'suspended':
        return new ZkError(
          ZkErrorCode.ConnectionLoss,
          `session ${this.id}: the connection to ZooKeeper is lost (suspended)`,
        );
      default:
        return new ZkError(ZkErrorCode.SessionExpired, `session ${this.id} has ended`);
    }
  }
}

/** One client's sessions as the recipes see them: the one subscription to its `session$`. */
class ClientSessions {
  private last: SessionEvent;
  /** Times the client became connected (`connected` or `reconnected`). */
  private connections = 0;
  private readonly views = new Map<string, SessionView>();

  constructor(private readonly client: ZkClient) {
    this.last = { state: client.state, sessionId: client.sessionId };
    client.session$.subscribe({
      next: (event) => this.observe(event),
      complete: () => this.observe({ state: 'closed', sessionId: this.last.sessionId }),
    });
  }

  get sessionId(): string | undefined {
    return this.last.sessionId;
  }

  view(id: string, onSuspended: SuspensionPolicy): SessionView {
    const key = `${id}\u0000${onSuspended}`;
    const known = this.views.get(key);
    if (known) return known;
    const view = new SessionView(this.client, id, onSuspended, () => this.views.delete(key));
    this.views.set(key, view);
    // What the client said last decides where the view starts (it may be over already).
    view.observe(this.last);
    return view;
  }

  /**
   * A mark of the connection now: `sawConnection()` then says whether the client was connected
   * at any moment since.
   */
  mark(): { sawConnection(): boolean } {
    const connectedThen = isReadWriteState(this.last.state);
    const connections = this.connections;
    return { sawConnection: () => connectedThen || this.connections > connections };
  }

  private observe(event: SessionEvent): void {
    this.last = event;
    if (isReadWriteState(event.state)) this.connections += 1;
    for (const view of [...this.views.values()]) view.observe(event);
  }
}

const clients = new WeakMap<ZkClient, ClientSessions>();

function sessionsOf(client: ZkClient): ClientSessions {
  let sessions = clients.get(client);
  if (!sessions) {
    sessions = new ClientSessions(client);
    clients.set(client, sessions);
  }
  return sessions;
}

/**
 * The view of a session of `client`: the one given (`id`: a hold's `sessionId`), or the current
 * one. Undefined when no id is given and the client has no session (never connected, or between
 * two sessions). A view of a session that is over already is born ended.
 *
 * ## Example
 * ```ts
 * const session = sessionOf(client, { id: lease.sessionId, onSuspended: 'continue' });
 * session?.signal.addEventListener('abort', () => console.log('over:', session.ended));
 * // Output: over: session-expired
 * ```
 *
 * @param client The client whose session it is.
 * @param options The session's id (default: the current one) and what a suspension does.
 * @return The shared view, or undefined when there is no session to view.
 */
export function sessionOf(client: ZkClient, options: SessionOptions = {}): Session | undefined {
  const sessions = sessionsOf(client);
  const id = options.id ?? sessions.sessionId;
  if (id === undefined) return undefined;
  return sessions.view(id, options.onSuspended ?? 'release');
}

/**
 * A mark of `client`'s connection now: `sawConnection()` says whether it was connected at any
 * moment since (a wait that timed out while ZooKeeper was unreachable says so).
 */
export function connectionMark(client: ZkClient): { sawConnection(): boolean } {
  return sessionsOf(client).mark();
}
