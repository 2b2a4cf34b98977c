/**
 * Revocation, Curator-compatible: asking a lock's holder to release it by writing `__REVOKE__`
 * into its node (what Curator's `Revoker.attemptRevoke` does); holders that opted in
 * (`revocable: true`, Curator's `makeRevocable`) are told and decide when to release.
 */
import { isZkError, nameOf, validatePath, ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { parseChild, REVOKE_MESSAGE } from './recipe/lock-children';

/**
 * Asks the holder of the lock node `node` to release it: a zkrx lease taken with
 * `revocable: true` emits `revoked$` and aborts its `signal` (LockRevokedError), a Curator lock
 * made revocable runs its revocation listener. Holders that did not opt in ignore it. Works on
 * every kind of lock node: mutex, read and write locks, semaphore leases, elections.
 *
 * ## Example
 * ```ts
 * const asked = await requestRevoke(client, '/locks/orders/_c_5f0e…-lock-0000000007');
 * console.log(asked);
 * // Output: true
 * ```
 *
 * @param client Any client: the request is a write to the node, not a hold.
 * @param node The holder's lock node (a lease's `node`; `zkrx locks <path>` lists them).
 * @return True once asked; false when the node is gone already (its lease ended).
 */
export async function requestRevoke(client: ZkClient, node: string): Promise<boolean> {
  if (!ZkClient.isInstance(client)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      "requestRevoke: expected a ZkClient from @zkrx/core's createClient",
    );
  }
  const path = validatePath(node);
  if (path === '/' || parseChild(nameOf(path)).kind === 'other') {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `requestRevoke: ${JSON.stringify(path)} is not a lock node (expected a node such as <lock path>/_c_<uuid>-lock-<sequence>)`,
      { path },
    );
  }
  try {
    await client.promises.set(path, REVOKE_MESSAGE);
    return true;
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) return false;
    throw error;
  }
}
