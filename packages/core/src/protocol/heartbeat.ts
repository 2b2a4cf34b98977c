/**
 * The heartbeat of an established connection: a ping when the client has been quiet for a third
 * of the session timeout, and the read timeout — the connection goes when the server has been
 * silent for two thirds of it.
 */
import { ZkError, ZkErrorCode } from '../errors';
import { OpCode } from './codes';
import type { Connection } from './connection';
import { encodeHeaderOnly } from './records';

/** How late a heartbeat timer may run before the delay counts as this process's own stall. */
export const STALL_TOLERANCE_MS = 50;

/**
 * Pings when nothing was sent for a third of the session timeout; drops the connection when
 * nothing was received for two thirds of it (ClientCnxn's read timeout) — silence on the
 * server's side, not ours:
 * - Before deciding, it looks at the socket: a timer can fire before the poll phase of the
 *   same turn reads a reply that arrived while the event loop was blocked (a sync parse, a GC
 *   pause). The decision waits one `setImmediate`, which runs after that poll phase.
 * - Time the event loop spent blocked does not count as the server's silence: a tick that
 *   runs late was stalled by us, and the server could not answer a ping we did not send. The
 *   lateness is credited until the next frame arrives, and a ping goes out at once.
 * Java's ClientCnxn reads the socket before it checks the read timeout too (its send thread
 * selects, then measures); it does count a GC pause as silence, which this does not.
 *
 * ## Example
 * ```ts
 * const heartbeat = startHeartbeat(connection, 10_000, () => session.isCurrent(connection));
 * heartbeat.stop(); // when the connection goes
 * ```
 *
 * @param connection The established connection.
 * @param sessionTimeoutMs The negotiated session timeout.
 * @param isCurrent Whether the connection is still the session's, in use (else it stops).
 * @return `stop()`.
 */
export function startHeartbeat(
  connection: Connection,
  sessionTimeoutMs: number,
  isCurrent: () => boolean,
): { stop(): void } {
  const readTimeout = (sessionTimeoutMs * 2) / 3;
  const pingInterval = sessionTimeoutMs / 3;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  /** When the pending tick should run (performance.now()). */
  let due = 0;
  /** Our own stalls (ms) since the frame received at `creditFrom`. */
  let stallCredit = 0;
  let creditFrom = connection.lastReceived;
  const running = () => !stopped && !connection.isClosed && isCurrent();
  const schedule = (delayMs: number) => {
    const delay = Math.max(1, Math.ceil(delayMs));
    due = performance.now() + delay;
    timer = setTimeout(tick, delay);
  };
  const tick = () => {
    timer = undefined;
    if (!running()) return;
    const late = performance.now() - due;
    // A reply may be sitting unread in the socket: look after this turn's poll phase (the
    // check does nothing if the connection went meanwhile).
    setImmediate(() => check(late));
  };
  const check = (late: number) => {
    if (!running()) return;
    if (connection.lastReceived !== creditFrom) {
      creditFrom = connection.lastReceived;
      stallCredit = 0;
    }
    // Timers run a little late on any busy loop; only a real stall earns credit.
    if (late > STALL_TOLERANCE_MS) stallCredit += late;
    const now = performance.now();
    const silentMs = now - connection.lastReceived - stallCredit;
    if (silentMs >= readTimeout) {
      connection.destroy(
        new ZkError(
          ZkErrorCode.ConnectionLoss,
          `no answer from ${connection.describe()} for ${Math.round(silentMs)} ms` +
            (stallCredit > 0
              ? ` (not counting ${Math.round(stallCredit)} ms this process was stalled)`
              : ''),
        ),
      );
      return;
    }
    let idleMs = now - connection.lastSent;
    if (idleMs >= pingInterval) {
      connection.send(encodeHeaderOnly(-2, OpCode.ping));
      connection.lastSent = now;
      idleMs = 0;
    }
    schedule(Math.min(readTimeout - silentMs, pingInterval - idleMs));
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
