/**
 * The states a client's ZooKeeper session goes through, as `client.session$` reports them.
 */

/**
 * - `connecting`: no session yet (first connection, or a new session after `expired`).
 * - `connected`: a new session is established (`sessionId` is new).
 * - `suspended`: the connection is lost; the session may survive. Ownership of ephemeral
 *   nodes (locks, leadership) is uncertain until `reconnected` or `expired`.
 * - `reconnected`: the connection is back and the session, its ephemeral nodes and its
 *   watches with it, survived.
 * - `expired`: the session is gone with its ephemeral nodes and watches. Reported when the
 *   server says so, or when the client stayed `suspended` for a whole session timeout. The
 *   client then opens a new session by itself (`connecting`, then `connected`).
 * - `closed`: `close()` was called; the client is done.
 * - `auth-failed`: the server refused the credentials; the client is done.
 */
export type SessionState =
  | 'connecting'
  | 'connected'
  | 'suspended'
  | 'reconnected'
  | 'expired'
  | 'closed'
  | 'auth-failed';

/** One emission of `client.session$`. */
export interface SessionEvent {
  readonly state: SessionState;
  /** The session id in hex as ZooKeeper prints it (`ephemeralOwner` uses the same form). */
  readonly sessionId: string | undefined;
}

/** True for the states in which calls reach the server. */
export function isConnectedState(state: SessionState): boolean {
  return state === 'connected' || state === 'reconnected';
}

/** True for the states after which the client can do nothing more. */
export function isTerminalState(state: SessionState): boolean {
  return state === 'closed' || state === 'auth-failed';
}
