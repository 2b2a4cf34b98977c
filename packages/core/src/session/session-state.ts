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
 * - `read-only`: connected to a read-only server (only with `canBeReadOnly`): a server cut off
 *   from its quorum, serving reads of what it had and refusing writes (`NotReadOnly`). Calls
 *   reach it, but it says nothing of the session on the quorum, which may be expiring it
 *   meanwhile: for whatever holds ephemeral nodes it is as uncertain as `suspended`. Java's
 *   `ConnectedReadOnly`. Followed by `connected` (a new session, when the client had none on
 *   the quorum) or `reconnected` once a read-write server is found, or by `suspended`.
 * - `expired`: the session is gone with its ephemeral nodes and watches, as the server said.
 *   The client then opens a new session by itself (`connecting`, then `connected`). The client
 *   never presumes an expiry itself: after a quorum loss the servers restart every session's
 *   clock, so a session can outlive a cut longer than its timeout (`suspended` lasts until a
 *   server answers).
 * - `closed`: `close()` was called; the client is done.
 * - `auth-failed`: the server refused the credentials; the client is done.
 */
export type SessionState =
  | 'connecting'
  | 'connected'
  | 'suspended'
  | 'reconnected'
  | 'read-only'
  | 'expired'
  | 'closed'
  | 'auth-failed';

/** One emission of `client.session$`. */
export interface SessionEvent {
  readonly state: SessionState;
  /** The session id in hex as ZooKeeper prints it (`ephemeralOwner` uses the same form). */
  readonly sessionId: string | undefined;
}

/**
 * True for the states in which calls reach a server: `connected`, `reconnected` and
 * `read-only` (where writes fail `NotReadOnly`).
 */
export function isConnectedState(state: SessionState): boolean {
  return state === 'connected' || state === 'reconnected' || state === 'read-only';
}

/**
 * True for the states in which a read-write server of the quorum answers for the session:
 * `connected` and `reconnected`. Only then does what it says of the session's ephemeral nodes
 * hold (a read-only server answers from a copy cut off from the quorum).
 */
export function isReadWriteState(state: SessionState): boolean {
  return state === 'connected' || state === 'reconnected';
}

/** True for the states after which the client can do nothing more. */
export function isTerminalState(state: SessionState): boolean {
  return state === 'closed' || state === 'auth-failed';
}
