/**
 * A move the client makes itself — its server left the configuration, or servers were added
 * and it is one of the clients that rebalance to them — with its session known alive: connect
 * to the new server first, drain the old connection, ping, and reattach the session there. The
 * session is suspended only if the reattach does not complete within a bound.
 *
 * Why no lease ends (the safety argument). Under `onSuspended: 'release'` a holder gives up on
 * `suspended`, which says "the session may be gone"; a planned move withholds it only while the
 * session surely lives. ZooKeeper expires a session only after a whole session timeout T in
 * which no server heard from it. Before the reattach the old connection is drained and a ping
 * is answered: the server heard the session at `heardAt` (when that ping was queued, before
 * any stall that delayed it), so the session lives at least until `heardAt + T`. The move is
 * given until `heardAt + (1 − SESSION_MARGIN)·T`, and no more than `2T/3` from its start: the
 * first is the point at which the heartbeat drops a connection whose server heard nothing
 * (heartbeat.ts, rule 2), so a holder hears `suspended` at least `SESSION_MARGIN·T` before the
 * server could expire the session; the second is the heartbeat's read timeout, so it hears it
 * no later than it would of a server gone silent. A move whose ping came back too late to leave
 * at least `MIN_MOVE_MS` does not start (the old connection stays, its heartbeat goes on); one
 * whose bound a stall of ours ate before the switch is suspended at the switch, before anything
 * is asked of the new server (ensemble-moves.ts: an answer asked for after the bound never
 * counts as back in time).
 * Everything sent on the old connection was answered before the reattach, and the new server
 * accepts the session only once it has seen the last zxid the client read (ConnectRequest's
 * `lastZxidSeen`): the session's order and what it read stay as they were. One-shot watches
 * are re-registered with that zxid (setWatches), so a change made during the move fires them
 * on the new server; persistent watches have no such replay, so the client reads their trees
 * again (watch-tree.ts), as after any reconnection.
 */
import type { Logger } from '../transport/logger';
import type { Connection, Endpoint } from './connection';
import { formatEndpoint } from './connection';
import { SESSION_MARGIN } from './heartbeat';
import type { RequestPipeline } from './pipeline';

/** What a planned move needs of its session. */
export interface MoveSession {
  readonly log: Required<Logger>;
  readonly pipeline: RequestPipeline;
  /** The session's id (hex), for messages. */
  sessionId(): string;
  /** The connection the move started from, while the session is still on it, connected. */
  isOn(connection: Connection): boolean;
  /** Opens a connection (TCP, TLS) to `endpoint`, no session on it yet. */
  open(endpoint: Endpoint): { promise: Promise<Connection>; cancel(): void };
  /** The addresses of a host of the list (a name is resolved); undefined when it does not resolve in time. */
  addressesOf(host: Endpoint): Promise<readonly Endpoint[] | undefined>;
  sessionTimeoutMs(): number;
  /** One connection attempt's time (its handshake included): the drain's bound too. */
  attemptTimeoutMs(): number;
  /** Leaves `from` for `to` and reattaches the session there; suspended if not done by `deadline`. */
  reattach(from: Connection, to: Connection, deadline: number): void;
  /** The move ended without a reattach (`stayed`: on the old connection). */
  ended(outcome: 'stayed' | 'abandoned'): void;
}

/**
 * How long the session may take, from `now`, to be back on a server before it is reported
 * suspended: at most two thirds of the session timeout (the heartbeat's read timeout), and no
 * later than `(1 − SESSION_MARGIN)` of it after the server last surely heard the session
 * (`heardAt`). Negative or small: no move starts.
 *
 * ## Example
 * ```ts
 * console.log(moveBoundMs({ now: 1_000, heardAt: 900, timeoutMs: 6_000 }));
 * console.log(moveBoundMs({ now: 5_000, heardAt: 0, timeoutMs: 6_000 }));
 * // Output: 4000
 * //         0
 * ```
 */
export function moveBoundMs(clocks: {
  readonly now: number;
  readonly heardAt: number;
  readonly timeoutMs: number;
}): number {
  const { now, heardAt, timeoutMs } = clocks;
  return Math.min((timeoutMs * 2) / 3, heardAt + timeoutMs * (1 - SESSION_MARGIN) - now);
}

/**
 * The shortest bound a move starts with: less, and it waits for the next one (the old
 * connection stays, its heartbeat goes on).
 */
export const MIN_MOVE_MS = 500;

/**
 * One planned move: tries the servers of `order` in turn until one takes a connection, then
 * drains the old connection, pings, and hands the session over ({@link MoveSession.reattach}).
 *
 * ## Example
 * ```ts
 * const move = new PlannedMove(session, connection, order);
 * move.start();
 * move.cancel(); // a new list came, or the session closes
 * ```
 */
export class PlannedMove {
  private next = 0;
  private cancelled = false;
  private attempt: { cancel(): void } | undefined;
  private target: Connection | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly session: MoveSession,
    private readonly from: Connection,
    private readonly order: readonly Endpoint[],
  ) {}

  start(): void {
    void this.tryNext();
  }

  /** Ends the move before the reattach (nothing happens after it); the old connection resumes. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.stop();
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.attempt?.cancel();
    this.attempt = undefined;
    this.target?.destroy();
    this.target = undefined;
    if (this.session.isOn(this.from)) this.session.pipeline.resume();
  }

  private end(outcome: 'stayed' | 'abandoned', why: string): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.stop();
    this.session.log.info(`planned move ended on ${this.from.describe()}: ${why}`, {
      sessionId: this.session.sessionId(),
    });
    this.session.ended(outcome);
  }

  private live(): boolean {
    if (this.cancelled) return false;
    if (this.session.isOn(this.from)) return true;
    // The old connection went meanwhile: the ordinary reconnection takes over.
    this.end('abandoned', 'the connection went before the move');
    return false;
  }

  private async tryNext(): Promise<void> {
    while (this.live()) {
      const host = this.order[this.next++];
      if (!host) return this.end('stayed', 'no server of the new list took a connection');
      for (const endpoint of (await this.session.addressesOf(host)) ?? []) {
        if (!this.live()) return;
        const attempt = this.session.open(endpoint);
        this.attempt = attempt;
        const connection = await attempt.promise.catch(() => undefined);
        this.attempt = undefined;
        if (!connection) continue;
        if (!this.live()) {
          connection.destroy();
          return;
        }
        this.target = connection;
        return this.drain();
      }
    }
  }

  /** Nothing new goes on the old connection; once every reply is in, a ping. */
  private drain(): void {
    const { pipeline, log } = this.session;
    this.timer = setTimeout(
      // The last reply may be in the socket, unread behind a stall of ours: look after the poll.
      () =>
        setImmediate(() =>
          this.end('stayed', `the old connection was not drained within ${this.bound()} ms`),
        ),
      this.bound(),
    );
    pipeline.quiesce(() => {
      if (!this.live()) return;
      pipeline.ping();
      log.debug(
        `planned move: ping sent on ${this.from.describe()}, reattaching after its answer`,
        {
          sessionId: this.session.sessionId(),
        },
      );
      pipeline.quiesce(() => this.answered());
    });
  }

  /** The ping came back: the session is known alive; reattach if that leaves enough time. */
  private answered(): void {
    if (!this.live()) return;
    const target = this.target!;
    const { pipeline, log } = this.session;
    const bound = moveBoundMs({
      now: performance.now(),
      heardAt: pipeline.heardAt,
      timeoutMs: this.session.sessionTimeoutMs(),
    });
    if (bound < MIN_MOVE_MS) {
      return this.end(
        'stayed',
        `the session was last heard too long ago (${Math.round(bound)} ms left)`,
      );
    }
    const deadline = performance.now() + bound;
    log.debug(
      `planned move: reattaching session 0x${this.session.sessionId()} on ${formatEndpoint(target.endpoint)} (within ${Math.round(bound)} ms)`,
      { sessionId: this.session.sessionId() },
    );
    clearTimeout(this.timer);
    this.timer = undefined;
    this.cancelled = true;
    this.target = undefined;
    this.session.reattach(this.from, target, deadline);
  }

  /**
   * How long the drain may take: the old connection still works meanwhile (calls wait), so it
   * may take longer than one attempt — up to a third of the session timeout.
   */
  private bound(): number {
    return Math.max(this.session.attemptTimeoutMs(), this.session.sessionTimeoutMs() / 3);
  }
}
