/**
 * The errors of the `zkrx` command: what went wrong in words a person acts on, a stable `code`
 * and the exit code it ends the command with (2: the command was used wrongly; 1: it failed).
 */
import { ZkrxError, type ZkrxErrorOptions } from '@zkrx/core';

/** Why a `zkrx` command stopped. */
export const CliErrorCode = {
  /** An unknown command or option, a missing or malformed argument. Exit code 2. */
  BadUsage: 'BadUsage',
  /** `release` / `revoke` was given a node that is not a lock's (or a path that is). Exit code 2. */
  NotALockNode: 'NotALockNode',
  /** The node is gone already. Exit code 1. */
  NodeGone: 'NodeGone',
  /** The node changed between the confirmation and the delete (a revoke request, say). Exit code 1. */
  NodeChanged: 'NodeChanged',
  /** ZooKeeper could not be reached in time. Exit code 1. */
  Unreachable: 'Unreachable',
  /** The person said no, or could not be asked (no terminal, no `--yes`). Exit code 1. */
  Declined: 'Declined',
  /** `zkrx dev-server` could not start ZooKeeper (no Java or ZooKeeper here, the port taken). Exit code 1. */
  NotStarted: 'NotStarted',
} as const;

export type CliErrorCode = (typeof CliErrorCode)[keyof typeof CliErrorCode];

/** A `zkrx` command stopped: `code`, and the `exitCode` the command exits with. */
export class CliError extends ZkrxError<CliErrorCode> {
  protected static override readonly marker = '@zkrx/cli.CliError';
  declare static readonly isInstance: (value: unknown) => value is CliError;
  override readonly name = 'CliError';
  readonly exitCode: 1 | 2;

  constructor(code: CliErrorCode, message: string, options?: ZkrxErrorOptions) {
    super(code, message, options);
    this.exitCode = code === CliErrorCode.BadUsage || code === CliErrorCode.NotALockNode ? 2 : 1;
  }
}
