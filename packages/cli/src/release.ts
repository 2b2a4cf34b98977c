/**
 * `zkrx release <node> --force` (delete a stuck holder's lock node, after a confirmation) and
 * `zkrx revoke <node>` (ask its holder to release): both find the node in its lock first, and
 * refuse anything that is not a lock's node.
 */
import { ConsoleError, type FoundNode, findLockNode, releaseNode, revokeNode } from '@zkrx/console';
import type { ZkClient } from '@zkrx/core';
import { CliError, CliErrorCode } from './errors';
import { formatData, formatDuration, formatSession } from './format';
import type { CliIo, Input } from './io';

/**
 * The node in its lock (@zkrx/console's `findLockNode`), its errors as the command's: NodeGone,
 * NotALockNode, NodeChanged keep their codes.
 */
async function asCommandErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (ConsoleError.isInstance(error) && error.code in CliErrorCode) {
      throw new CliError(error.code as CliErrorCode, error.message, { cause: error });
    }
    throw error;
  }
}

/** The node, its lock and its holder, for a person deciding. */
export function describeNode(found: FoundNode, now = Date.now()): string {
  const { lock, participant, place } = found;
  const role =
    place === 0
      ? `holds it (for at most ${formatDuration(now - participant.createdAt)})`
      : `waits, number ${place} in line (for ${formatDuration(now - participant.createdAt)})`;
  return [
    `node     ${participant.node}`,
    `lock     ${lock.path} (${lock.kind}, ${lock.layout} layout)`,
    `role     ${participant.mode}: ${role}`,
    `session  ${formatSession(participant.sessionId)}${participant.ownSession ? ' (this command)' : ''}`,
    `data     ${formatData(participant.data, 80)}${participant.revokeRequested ? ' (a revoke was requested)' : ''}`,
  ].join('\n');
}

/** Reads one line from `input` (resolves '' at its end). */
export function readLine(input: Input): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => {
      input.off('data', onData);
      input.off('end', done);
      input.pause();
      resolve(text.split('\n')[0] ?? '');
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes('\n')) done();
    };
    input.on('data', onData);
    input.on('end', done);
    input.resume();
  });
}

const WARNING = `Deleting it ends this hold (or place in line) at once; the next in line goes on.
The holder is not told: a zkrx holder learns it (LockLostError, node-deleted) and stops,
a Curator or kazoo holder may go on working as if it still held the lock. Release only
the lock of a process that is stuck or gone.`;

/** `zkrx release <node> --force`: confirms (unless `yes`), then deletes the node. */
export async function release(
  client: ZkClient,
  node: string,
  options: { yes: boolean; io: CliIo },
): Promise<number> {
  const { io } = options;
  const found = await asCommandErrors(findLockNode(client, node));
  io.stdout.write(`${describeNode(found)}\n\n${WARNING}\n`);
  if (!options.yes) {
    if (!io.stdin.isTTY) {
      throw new CliError(
        CliErrorCode.Declined,
        'not released: there is no terminal to confirm on (add --yes to release without asking)',
      );
    }
    io.stdout.write('Delete this lock node? [y/N] ');
    const answer = (await readLine(io.stdin)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      throw new CliError(CliErrorCode.Declined, 'not released (the answer was not "y")');
    }
  }
  // Only the node as shown: a revoke request written since then changes its version.
  await asCommandErrors(releaseNode(client, found));
  io.stdout.write(`released: ${node} deleted\n`);
  return 0;
}

/** `zkrx revoke <node>`: asks its holder to release (Curator's revocation protocol). */
export async function revoke(client: ZkClient, node: string, io: CliIo): Promise<number> {
  const found = await asCommandErrors(findLockNode(client, node));
  await asCommandErrors(revokeNode(client, found));
  io.stdout.write(
    `asked ${formatSession(found.participant.sessionId)} (${formatData(found.participant.data)}) to release ${found.lock.path}: a holder that is revocable decides when\n`,
  );
  return 0;
}
