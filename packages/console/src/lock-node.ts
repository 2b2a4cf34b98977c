/**
 * The node an action is about, found in its lock (`findLockNode`), and the two actions on it —
 * `releaseNode` (delete it, only as it was shown) and `revokeNode` (ask its holder to release,
 * Curator's protocol): what the console's action routes and `zkrx release|revoke` do.
 */
import { isZkError, nameOf, parentOf, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { type InspectedLock, type InspectedParticipant, inspect, requestRevoke } from '@zkrx/lock';
import { ConsoleError, ConsoleErrorCode } from './errors';

/** A lock node, found in its lock. */
export interface FoundNode {
  readonly lock: InspectedLock;
  readonly participant: InspectedParticipant;
  /** Its place: 0 for a holder, else its place in line (1 is next). */
  readonly place: number;
}

// What a lock node's name looks like (Curator's and zkrx's markers with a sequence, kazoo's).
const lockNodeName = /(lock-|__READ__|__WRIT__|latch-|lease-|__r?lock__)-?\d{9,10}$|^[0-9a-f]{32}$/;

/**
 * Finds `node` among the holders and waiters of its lock.
 *
 * ## Example
 * ```ts
 * const found = await findLockNode(client, '/locks/orders/_c_…-lock-0000000007');
 * console.log(found.place, found.participant.sessionId);
 * // Output: 0 10a3f9c2e0001
 * ```
 *
 * @param client A connected client.
 * @param node The node's full path.
 * @return The node in its lock. Rejects with ConsoleError `NodeGone` (it was a lock node's
 *   name, and is gone) or `NotALockNode`.
 */
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
    throw new ConsoleError(
      ConsoleErrorCode.NodeGone,
      `${node} is gone already: its hold or wait ended`,
    );
  }
  if (!exists) {
    throw new ConsoleError(
      ConsoleErrorCode.NotALockNode,
      `${node} does not exist, and is not a lock node's name (zkrx locks <lock path> lists the nodes)`,
    );
  }
  throw new ConsoleError(
    ConsoleErrorCode.NotALockNode,
    `${node} is not a lock node: give the node of a holder or waiter, <lock path>/<name>, as zkrx locks ${node} lists them`,
  );
}

/**
 * Deletes a lock node found by `findLockNode`, only at the version shown (a revoke request
 * written since changes it). Rejects with ConsoleError `NodeGone` or `NodeChanged`.
 */
export async function releaseNode(
  client: ZkClient,
  found: FoundNode,
  version?: number,
): Promise<void> {
  const node = found.participant.node;
  try {
    await client.promises.delete(node, version ?? found.participant.version);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) {
      throw new ConsoleError(ConsoleErrorCode.NodeGone, `${node} is gone already: not deleted`, {
        cause: error,
      });
    }
    if (isZkError(error, ZkErrorCode.BadVersion)) {
      throw new ConsoleError(
        ConsoleErrorCode.NodeChanged,
        `${node} changed since it was shown (a revoke request?): not deleted`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Asks the holder of a node found by `findLockNode` to release (writes `__REVOKE__`). Rejects
 * with ConsoleError `NotALockNode` (its recipe has no revocation) or `NodeGone`.
 */
export async function revokeNode(client: ZkClient, found: FoundNode): Promise<void> {
  const node = found.participant.node;
  let asked: boolean;
  try {
    asked = await requestRevoke(client, node);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.BadArguments)) {
      throw new ConsoleError(
        ConsoleErrorCode.NotALockNode,
        `${node} cannot be revoked: ${found.lock.layout} ${found.lock.kind} nodes have no revocation protocol`,
        { cause: error },
      );
    }
    throw error;
  }
  if (!asked) {
    throw new ConsoleError(ConsoleErrorCode.NodeGone, `${node} is gone already: nothing to revoke`);
  }
}
