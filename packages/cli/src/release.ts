/**
 * `zkrx release <node> --force` (delete a stuck holder's lock node, after a confirmation) and
 * `zkrx revoke <node>` (ask its holder to release): both find the node in its lock first, and
 * refuse anything that is not a lock's node.
 */
import { isZkError, nameOf, parentOf, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type InspectedLock, type InspectedParticipant, inspect, requestRevoke } from '@zkrx/lock';
import { CliError, CliErrorCode } from './errors';
import { formatData, formatDuration, formatSession } from './format';
import type { CliIo, Input } from './io';

/** A lock node, found in its lock. */
export interface FoundNode {
  readonly lock: InspectedLock;
  readonly participant: InspectedParticipant;
  /** Its place: 0 for a holder, else its place in line (1 is next). */
  readonly place: number;
}

// What a lock node's name looks like (Curator's and zkrx's markers with a sequence, kazoo's).
const lockNodeName = /(lock-|__READ__|__WRIT__|latch-|lease-|__r?lock__)-?\d{9,10}$|^[0-9a-f]{32}$/;

/** Finds `node` among the holders and waiters of its lock; throws NotALockNode or NodeGone. */
export async function findLockNode(client: ZkClient, node: string): Promise<FoundNode> {
  if (node !== '/') {
    const lock = await inspect(client, parentOf(node));
    if (lock) {
      const holder = lock.holders.find((participant) => participant.node === node);
      if (holder) return { lock, participant: holder, place: 0 };
      const index = lock.waiters.findIndex((participant) => participant.node === node);
      if (index >= 0) {
        return { lock, participant: lock.waiters[index] as InspectedParticipant, place: index + 1 };
      }
    }
  }
  const exists = node === '/' ? true : (await client.promises.exists(node)) !== null;
  if (!exists && node !== '/' && lockNodeName.test(nameOf(node))) {
    throw new CliError(CliErrorCode.NodeGone, `${node} is gone already: its hold or wait ended`);
  }
  if (!exists) {
    throw new CliError(
      CliErrorCode.NotALockNode,
      `${node} does not exist, and is not a lock node's name (zkrx locks <lock path> lists the nodes)`,
    );
  }
  throw new CliError(
    CliErrorCode.NotALockNode,
    `${node} is not a lock node: give the node of a holder or waiter, <lock path>/<name>, as zkrx locks ${node} lists them`,
  );
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
  const found = await findLockNode(client, node);
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
  try {
    // Only the node as shown: a revoke request written since then changes its version.
    await client.promises.delete(node, found.participant.version);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) {
      throw new CliError(CliErrorCode.NodeGone, `${node} is gone already: not deleted by zkrx`);
    }
    if (isZkError(error, ZkErrorCode.BadVersion)) {
      throw new CliError(
        CliErrorCode.NodeChanged,
        `${node} changed since it was shown (a revoke request?): not deleted; run zkrx release again`,
      );
    }
    throw error;
  }
  io.stdout.write(`released: ${node} deleted\n`);
  return 0;
}

/** `zkrx revoke <node>`: asks its holder to release (Curator's revocation protocol). */
export async function revoke(client: ZkClient, node: string, io: CliIo): Promise<number> {
  const found = await findLockNode(client, node);
  let asked: boolean;
  try {
    asked = await requestRevoke(client, node);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.BadArguments)) {
      throw new CliError(
        CliErrorCode.NotALockNode,
        `${node} cannot be revoked: ${found.lock.layout} ${found.lock.kind} nodes have no revocation protocol`,
      );
    }
    throw error;
  }
  if (!asked)
    throw new CliError(CliErrorCode.NodeGone, `${node} is gone already: nothing to revoke`);
  io.stdout.write(
    `asked ${formatSession(found.participant.sessionId)} (${formatData(found.participant.data)}) to release ${found.lock.path}: a holder that is revocable decides when\n`,
  );
  return 0;
}
