/**
 * The errors of the interop harness: a peer that cannot run here, and a peer's refusal or
 * failure to do what it was asked. ZkrxErrors, as every zkrx error is.
 */
import { ZkrxError } from '@zkrx/core';

/** The implementations a peer can run. */
export type PeerKind = 'curator' | 'kazoo';

/**
 * A peer cannot run on this machine: Java, the Curator jars, or a Python with kazoo is missing.
 * `reason` says which and how to fix it; tests skip on it (see `peerAvailability`).
 */
export class InteropUnavailableError extends ZkrxError<'InteropUnavailable'> {
  protected static override readonly marker = '@zkrx/interop.InteropUnavailableError';
  declare static readonly isInstance: (value: unknown) => value is InteropUnavailableError;
  override readonly name = 'InteropUnavailableError';

  constructor(
    readonly peer: PeerKind,
    readonly reason: string,
  ) {
    super('InteropUnavailable', `The ${peer} peer cannot run here: ${reason}`);
  }
}

/** Why a peer command failed. */
export const PeerErrorCode = {
  /** The recipe was not acquired within the command's `timeoutMs` (the peer left no node). */
  timeout: 'timeout',
  /** Released (or closed) while still waiting to acquire. */
  cancelled: 'cancelled',
  /** The session the command ran on was closed while it waited. */
  sessionClosed: 'session-closed',
  /** The peer does not implement this recipe or command (e.g. a latch on kazoo). */
  unsupported: 'unsupported',
  /** The command was malformed (missing path, bad number...). */
  badRequest: 'bad-request',
  /** No acquire or latch with that id is running in the peer. */
  unknownHandle: 'unknown-handle',
  /** The recipe threw: see the message (and the peer's stderr). */
  failed: 'failed',
  /** The peer process exited before answering. */
  exited: 'exited',
  /** The peer did not answer within the driver's own deadline. */
  noReply: 'no-reply',
  /** The peer did not get ready (could not start or connect). */
  startFailed: 'start-failed',
} as const;

export type PeerErrorCode = (typeof PeerErrorCode)[keyof typeof PeerErrorCode];

/** A peer command failed: `code` says why; `stderr` is the end of the peer's diagnostics. */
export class PeerError extends ZkrxError<PeerErrorCode> {
  protected static override readonly marker = '@zkrx/interop.PeerError';
  declare static readonly isInstance: (value: unknown) => value is PeerError;
  override readonly name = 'PeerError';

  constructor(
    readonly peer: PeerKind,
    readonly command: string,
    code: PeerErrorCode,
    message: string,
    readonly stderr = '',
  ) {
    super(
      code,
      `${peer} peer, ${command}: ${code}: ${message}${stderr ? `\n--- peer stderr (end) ---\n${stderr}` : ''}`,
    );
  }
}
