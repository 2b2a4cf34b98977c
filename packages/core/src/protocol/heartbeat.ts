/**
 * The heartbeat of an established connection: a ping when the client has been quiet for a third
 * of the session timeout; the connection goes when the server has been silent for two thirds of
 * it, or when the server may soon expire the session whatever this process's stalls.
 */
import { ZkError, ZkErrorCode } from '../errors/errors';
import type { Connection } from './connection';

/** How late a heartbeat timer may run before the delay counts as this process's own stall. */
export const STALL_TOLERANCE_MS = 50;

/**
 * The part of the session timeout kept in hand: the connection goes once the server has gone
 * `(1 − 1/6)` of the timeout without surely hearing from the session, so that what holds on to
 * the session (a lock's `'release'` holders) lets go a sixth of the timeout before the server
 * may expire it — time for the event loop to run the news.
 */
export const SESSION_MARGIN = 1 / 6;

/** What the heartbeat needs of the session besides the connection. */
export interface HeartbeatSession {
  /** Whether the connection is still the session's, in use (else the heartbeat stops). */
  isCurrent(): boolean;
  /** Sends a ping on the connection. */
  ping(): void;
  /**
   * performance.now() before which the server surely last heard from the session (when the
   * latest request it answered was sent); undefined where that says nothing of the session's
   * life (a read-only server's answers).
   */
  heardAt?(): number;
}

/**
 * Pings when nothing was sent for a third of the session timeout, and drops the connection —
 * so that the session's holders hear `suspended` — on either of two rules:
 *
 * 1. **Read timeout (ClientCnxn's): the server silent for two thirds of the timeout** — silent
 *    on its side, not ours. Before deciding it looks at the socket: a timer can fire before
 *    the poll phase of the same turn reads a reply that arrived while the event loop was
 *    blocked (a sync parse, a GC pause), so the decision waits one `setImmediate`, which runs
 *    after that poll phase. And time this process spent stalled *after the last frame it read*
 *    does not count as the server's silence: the server could not answer pings we did not send.
 *    A stall before that frame was read is not credited (the frame ended that silence), nor is
 *    anything once a new frame arrives. Java's ClientCnxn reads the socket before it checks
 *    the read timeout too; it counts a GC pause as silence, which this does not.
 * 2. **The session's own clock: nothing the server surely heard for `(1 − SESSION_MARGIN)` of
 *    the timeout**, counted from when the latest request it answered was sent (`heardAt`),
 *    stalls included — ZooKeeper expires a session a whole timeout after it last heard from it,
 *    whether or not this process was running meanwhile. This bounds how long any stall credit
 *    can keep the connection: never past the session timeout after the last frame.
 *
 * ## Example
 * ```ts
 * const heartbeat = startHeartbeat(connection, 10_000, {
 *   isCurrent: () => session.isCurrent(connection),
 *   ping: () => pipeline.ping(),
 *   heardAt: () => pipeline.heardAt,
 * });
 * heartbeat.stop(); // when the connection goes
 * ```
 *
 * @param connection The established connection.
 * @param sessionTimeoutMs The negotiated session timeout.
 * @param session The session's side: current or not, the ping, when the server last heard it.
 * @return `stop()`.
 */
export function startHeartbeat(
  connection: Connection,
  sessionTimeoutMs: number,
  session: HeartbeatSession,
): { stop(): void } {
  const pingInterval = sessionTimeoutMs / 3;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  /** When the pending tick should run (performance.now()). */
  let due = 0;
  const stalls = new StallCredit(connection.lastReceived);
  const running = () => !stopped && !connection.isClosed && session.isCurrent();
  const schedule = (delayMs: number) => {
    const delay = Math.max(1, Math.ceil(delayMs));
    due = performance.now() + delay;
    timer = setTimeout(tick, delay);
  };
  const tick = () => {
    timer = undefined;
    if (!running()) return;
    const ranAt = performance.now();
    const wasDue = due;
    // A reply may be sitting unread in the socket: look after this turn's poll phase (the
    // check does nothing if the connection went meanwhile).
    setImmediate(() => check(wasDue, ranAt));
  };
  const check = (wasDue: number, ranAt: number) => {
    if (!running()) return;
    const now = performance.now();
    const lastReceived = connection.lastReceived;
    const verdict = judgeSilence({
      now,
      lastReceived,
      stalledMs: stalls.after(lastReceived, wasDue, ranAt),
      heardAt: session.heardAt?.(),
      sessionTimeoutMs,
    });
    if (verdict.lost !== undefined) {
      connection.destroy(
        new ZkError(ZkErrorCode.ConnectionLoss, verdict.lost(connection.describe())),
      );
      return;
    }
    let idleMs = now - connection.lastSent;
    if (idleMs >= pingInterval) {
      session.ping();
      connection.lastSent = now;
      idleMs = 0;
    }
    schedule(Math.min(verdict.checkInMs, pingInterval - idleMs));
  };
  schedule(pingInterval);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * This process's own stalls since the last frame it read: what the read timeout does not count
 * as the server's silence. A heartbeat tick that runs late (`ranAt`, after it was `due`) shows
 * the process was stalled meanwhile; only the part of that stall after the last frame read
 * covered the server's silence — a frame read after the stall ended that silence, and a new
 * frame starts the count again from nothing.
 */
export class StallCredit {
  private creditMs = 0;

  constructor(private since: number) {}

  /**
   * The stalls counted since the frame read at `lastReceived`, this tick's (due at `due`, run at
   * `ranAt`) included when it ran more than {@link STALL_TOLERANCE_MS} late.
   *
   * ## Example
   * ```ts
   * const stalls = new StallCredit(0);
   * console.log(stalls.after(0, 2_000, 5_300)); // no frame since: the whole stall
   * console.log(stalls.after(5_300, 7_300, 7_310)); // a frame read after it: nothing left
   * // Output: 3300
   * //         0
   * ```
   */
  after(lastReceived: number, due: number, ranAt: number): number {
    if (lastReceived !== this.since) {
      this.since = lastReceived;
      this.creditMs = 0;
    }
    // Timers run a little late on any busy loop: that earns nothing.
    if (ranAt - due > STALL_TOLERANCE_MS) {
      this.creditMs += Math.max(0, ranAt - Math.max(due, lastReceived));
    }
    return this.creditMs;
  }
}

/** What the heartbeat concludes: the connection is lost (and why), or when to look again. */
export type SilenceVerdict =
  | { readonly lost: (server: string) => string; readonly checkInMs?: undefined }
  | { readonly lost?: undefined; readonly checkInMs: number };

/**
 * The heartbeat's two rules (see {@link startHeartbeat}), as a pure function of the clocks:
 * lost when the server was silent for two thirds of the session timeout, not counting
 * `stalledMs` of this process's own stalls since the last frame; or when nothing sent in
 * `(1 − SESSION_MARGIN)` of the timeout was answered (`heardAt`), stalls or not.
 *
 * ## Example
 * ```ts
 * const base = { lastReceived: 5_300, stalledMs: 0, heardAt: 2_000, sessionTimeoutMs: 6_000 };
 * console.log(judgeSilence({ ...base, now: 6_000 }).checkInMs); // 4 s unheard: 1 s left
 * console.log(judgeSilence({ ...base, now: 7_000 }).lost !== undefined); // 5 s unheard
 * // Output: 1000
 * //         true
 * ```
 */
export function judgeSilence(clocks: {
  /** performance.now(). */
  readonly now: number;
  /** When the last frame was read. */
  readonly lastReceived: number;
  /** This process's stalls since then ({@link StallCredit}). */
  readonly stalledMs: number;
  /** When the latest request a read-write server answered was sent; undefined on a read-only one. */
  readonly heardAt: number | undefined;
  readonly sessionTimeoutMs: number;
}): SilenceVerdict {
  const { now, lastReceived, stalledMs, heardAt, sessionTimeoutMs } = clocks;
  const readTimeout = (sessionTimeoutMs * 2) / 3;
  const unheardLimit = sessionTimeoutMs * (1 - SESSION_MARGIN);
  const silentMs = now - lastReceived - stalledMs;
  if (silentMs >= readTimeout) {
    return {
      lost: (server) =>
        `no answer from ${server} for ${Math.round(silentMs)} ms` +
        (stalledMs > 0
          ? ` (not counting ${Math.round(stalledMs)} ms this process was stalled)`
          : ''),
    };
  }
  if (heardAt === undefined) return { checkInMs: readTimeout - silentMs };
  const unheardMs = now - heardAt;
  if (unheardMs >= unheardLimit) {
    return {
      lost: (server) =>
        `${server} answered nothing sent in the last ${Math.round(unheardMs)} ms ` +
        `(session timeout ${sessionTimeoutMs} ms): the server may soon expire the session`,
    };
  }
  return { checkInMs: Math.min(readTimeout - silentMs, unheardLimit - unheardMs) };
}
