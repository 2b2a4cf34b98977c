/**
 * The errors of @zkrx/console: bad options, a request the console refuses, and an action whose
 * node is not (or no longer) a lock's — each with a stable `code` and the HTTP status it answers.
 */
import { ZkrxError, type ZkrxErrorOptions } from '@zkrx/core';

/** Why the console refused or failed. */
export const ConsoleErrorCode = {
  /** An option of `startConsole` / `consoleHandler` is wrong (a token too short, a bad host). */
  BadOptions: 'BadOptions',
  /** A request's view, path or body is malformed (HTTP 400). */
  BadRequest: 'BadRequest',
  /** Actions are off, the user may not act, or the CSRF token is missing or wrong (HTTP 403). */
  Forbidden: 'Forbidden',
  /** The node given to an action is not a holder's or a waiter's node of a lock (HTTP 400). */
  NotALockNode: 'NotALockNode',
  /** The node is gone already (HTTP 409). */
  NodeGone: 'NodeGone',
  /** The node changed since the page showed it: a revoke request, say (HTTP 409). */
  NodeChanged: 'NodeChanged',
  /** Too many pages are open at once (HTTP 503). */
  TooManyStreams: 'TooManyStreams',
} as const;

export type ConsoleErrorCode = (typeof ConsoleErrorCode)[keyof typeof ConsoleErrorCode];

const STATUS: Record<ConsoleErrorCode, number> = {
  BadOptions: 500,
  BadRequest: 400,
  Forbidden: 403,
  NotALockNode: 400,
  NodeGone: 409,
  NodeChanged: 409,
  TooManyStreams: 503,
};

/** The console refused a request or an option: `code`, and the HTTP `status` it answers. */
export class ConsoleError extends ZkrxError<ConsoleErrorCode> {
  protected static override readonly marker = '@zkrx/console.ConsoleError';
  declare static readonly isInstance: (value: unknown) => value is ConsoleError;
  override readonly name = 'ConsoleError';
  declare readonly code: ConsoleErrorCode;
  /** The HTTP status a request that failed so is answered with. */
  readonly status: number;

  constructor(code: ConsoleErrorCode, message: string, options?: ZkrxErrorOptions) {
    super(code, message, options);
    this.status = STATUS[code];
  }
}
