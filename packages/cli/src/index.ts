/**
 * @zkrx/cli — the `zkrx` command (who holds which ZooKeeper lock, a live view, release and
 * revoke), also callable from a program with `run`.
 */
export { CliError, CliErrorCode } from './errors';
export type { CliIo, Input, Output } from './io';
export { processIo } from './io';
export { run } from './run';
