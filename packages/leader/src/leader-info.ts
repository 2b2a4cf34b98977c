/**
 * `watchLeader`: who leads an election and who stands in it, for anyone (candidate or not), from a
 * watch on the election's children.
 */
import { joinPath, type ZkClient } from '@zkrx/core';
import { resolveLockOptions, sortChildren, unlessGone } from '@zkrx/lock/recipe';
import { defer, distinctUntilChanged, type Observable, switchMap } from 'rxjs';

/** Who leads an election, and who stands in it. */
export interface LeaderInfo {
  /** The leader's participant id, or undefined when nobody stands. */
  readonly leaderId: string | undefined;
  /** Every candidate in queue order; the first one leads. */
  readonly participants: readonly { readonly id: string; readonly isLeader: boolean }[];
}

/**
 * Who leads the election at `path`, for anyone (candidate or not): emits at once and on every
 * change. Works on latch (`latch-`) and selector (`lock-`) elections, Curator's included.
 *
 * ## Example
 * ```ts
 * watchLeader(client, '/election/scheduler').subscribe({
 *   next: ({ leaderId }) => console.log('leader:', leaderId),
 *   error: (error) => console.error('cannot watch the election:', error),
 * });
 * // Output: leader: worker-7
 * ```
 *
 * @param client The client that reads the election.
 * @param path The election path.
 * @return The leader's id and the candidates, now and on every change; errors only on a
 *   permanent failure (such as NoAuth).
 */
export function watchLeader(client: ZkClient, path: string): Observable<LeaderInfo> {
  return defer(() => {
    resolveLockOptions(client, path, {}, 'leader election');
    const ids = new Map<string, string>();
    return client.watchChildren(path).pipe(
      switchMap(async (names) => {
        const children = sortChildren(names).filter(
          (child) => child.kind === 'latch' || child.kind === 'exclusive',
        );
        for (const name of [...ids.keys()]) if (!names.includes(name)) ids.delete(name);
        const participants: { id: string; isLeader: boolean }[] = [];
        for (const child of children) {
          let id = ids.get(child.name);
          if (id === undefined) {
            const node = await unlessGone(client.promises.get(joinPath(path, child.name)));
            if (!node) continue;
            id = node.data.toString('utf8');
            ids.set(child.name, id);
          }
          participants.push({ id, isLeader: participants.length === 0 });
        }
        return { leaderId: participants[0]?.id, participants } satisfies LeaderInfo;
      }),
      distinctUntilChanged(
        (a, b) =>
          a.leaderId === b.leaderId &&
          a.participants.length === b.participants.length &&
          a.participants.every(
            (participant, index) => participant.id === b.participants[index]?.id,
          ),
      ),
    );
  });
}
