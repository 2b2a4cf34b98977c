/**
 * Reads of nodes that may be gone by the time they are read (a lock node released, a member
 * left): a missing node reads as `undefined`, any other failure stays a failure.
 */
import { isZkError, ZkErrorCode } from '@zkrx/core';

/**
 * What `read` resolves, or `undefined` when the node it reads is gone (ZkError `NoNode`).
 *
 * ## Example
 * ```ts
 * const node = await unlessGone(client.promises.get('/locks/orders/_c_…-lock-0000000007'));
 * console.log(node?.data.toString() ?? 'released meanwhile');
 * // Output: released meanwhile
 * ```
 *
 * @param read A read of one node (`get`, `children`, ...).
 * @return Its result, or undefined when the node does not exist.
 */
export async function unlessGone<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) return undefined;
    throw error;
  }
}
