/**
 * At most once per tick across the fleet: before a leader-only run of a tick, the leader raises
 * a marker to that tick in a write fenced by its leadership. The safety argument is here.
 */
import { isZkError, op, type ZkClient, ZkErrorCode } from '@zkrx/core';
import type { Election } from '@zkrx/leader';
import { LockLostError, nodeName } from '@zkrx/lock';

/**
 * Where the tick marker of a job is: one persistent node per job, beside the election (not in
 * it: the election's children are its candidates, as Curator reads them).
 */
export function tickMarkerPath(electionPath: string, job: string): string {
  return `${electionPath}.ticks/${nodeName(job)}`;
}

/** The tick `now` belongs to: the nearest multiple of `tickMs`, as a time (ms since the epoch). */
export function tickOf(now: number, tickMs: number): number {
  return Math.round(now / tickMs) * tickMs;
}

/**
 * Claims `tick` for this leader: true once the marker at `marker` went from an earlier tick (or
 * nothing) to `tick`, false when the tick (or a later one) is claimed already or this instance
 * does not lead any more. Any other failure rejects (a lost connection: the write may have
 * landed, so the tick is not run here — at most once).
 *
 * Why no tick runs twice: the marker only rises, and only through `election.guard` — one
 * transaction that checks this leader's own candidate node exists (a node first in the queue
 * stays first until deleted: sequential names only come after it, so it exists ⇔ it leads) and
 * sets the marker at the version read (or creates it, which fails if it exists). Of two writers
 * that read the same version, ZooKeeper applies one; the other gets BadVersion (or NodeExists)
 * and skips. A later leader reads the raised marker and skips that tick and every earlier one,
 * whatever its clock. It holds while the marker node lives: it is persistent (never reaped, as
 * the election's container can be), beside the election; deleting it by hand allows a re-run.
 */
export async function claimTick(
  client: ZkClient,
  election: Election,
  marker: string,
  tick: number,
): Promise<boolean> {
  let read: { last: number; version: number } | undefined;
  try {
    const { data, stat } = await client.promises.get(marker);
    read = { last: Number(data.toString()), version: stat.version };
  } catch (error) {
    if (!isZkError(error, ZkErrorCode.NoNode)) throw error;
  }
  if (read && !(tick > read.last)) return false;
  if (!read) await client.promises.mkdirp(marker.slice(0, marker.lastIndexOf('/')));
  const write = read ? op.set(marker, String(tick), read.version) : op.create(marker, String(tick));
  try {
    await election.guard([write]);
    return true;
  } catch (error) {
    // Not leading any more (the guard's check failed, or the term ended before it was sent).
    if (LockLostError.isInstance(error) || !election.isLeader) return false;
    // Claimed meanwhile by another writer of the version read.
    if (isZkError(error, ZkErrorCode.BadVersion, ZkErrorCode.NodeExists)) return false;
    throw error;
  }
}
