/**
 * Group membership: `members(client, path, { id })` joins with an ephemeral node named by the
 * member's id (member-node.ts), emits the live membership in id order (membership-watch.ts),
 * joins again after a session expiry, and leaves on unsubscribe.
 */
import { isZkError, joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { Observable } from 'rxjs';
import { type Joined, MemberNode } from './member-node';
import { sameMembers, watchMemberDetails, watchMemberIds } from './membership-watch';
import {
  checkClient,
  checkData,
  checkFlag,
  checkFleetPath,
  checkName,
  checkOptionsObject,
} from './options';

/** One live member of a group, as a listing of the group shows it. */
export interface Member {
  /** The member's id: the name of its node, unique among the live members. */
  readonly id: string;
}

/** A member with what its node holds (`members(…, { details: true })`). */
export interface MemberDetails extends Member {
  /** The member's `data` (its node's data as UTF-8; empty when none was given). */
  readonly data: string;
  /** The member's session (hex, as ZooKeeper prints it). */
  readonly sessionId: string;
  /** When it joined: its node's creation, ms since the epoch by the server's clock. */
  readonly joinedAt: number;
  /** The zxid of its node's creation: join order (a member that joins again gets a new one). */
  readonly czxid: number;
}

/** Who joins `members`: the member's id and what it shows the others. */
export interface MembersOptions {
  /** This member's id: unique among the group's live members; becomes a znode's name. */
  id: string;
  /** Shown to the others (`MemberDetails.data`) and by `zkrx members`: an address, a host name. */
  data?: string;
  /**
   * Also read each member's node once, when its name first shows, and emit `MemberDetails`
   * (data, session, join time): one read per member seen, on top of the listing. Default
   * `false`: a join costs each member one notification and one listing, nothing per member.
   */
  details?: boolean;
}

/** The checked options of `members`. */
export interface ResolvedMembers {
  readonly client: ZkClient;
  readonly path: string;
  readonly id: string;
  readonly data: Buffer;
  readonly details: boolean;
}

export function resolveMembersOptions(
  client: unknown,
  path: unknown,
  options: unknown,
  what = 'members',
): ResolvedMembers {
  const checkedClient = checkClient(client, what);
  const checkedPath = checkFleetPath(path, what);
  const given = checkOptionsObject(options, what);
  const id = checkName(given.id, 'id', what);
  const data = checkData(given.data, joinPath(checkedPath, id), what);
  const details = checkFlag(given.details, 'details', what);
  return { client: checkedClient, path: checkedPath, id, data, details };
}

/**
 * Joins the group at `path` and emits its live membership: subscribing creates this member's
 * node (`<path>/<id>`, ephemeral, holding `data`), every emission is the whole membership in id
 * order — the first one once this member is in it —, unsubscribing leaves (the node is
 * removed). After a session expiry the member joins again by itself. Completes when the client
 * closes.
 *
 * What it costs: one children watch on `path` (and one on this member's own node); a join or a
 * leave costs each member one notification and one listing, no read per member. With
 * `details: true` the members are `MemberDetails` (data, session, join time and order): each
 * member's node is read once, when its name first shows.
 *
 * An id another live member has is an error, not a second member: the observable errors with
 * `DuplicateMemberError` (and joins nothing). Bad input errors with ZkError `InvalidPath` or
 * `BadArguments` before anything is sent. Each subscription is one member: share it
 * (`share()`) to read one membership from several places.
 *
 * ## Example
 * ```ts
 * members(client, '/fleet/workers', { id: 'worker-1' }).subscribe({
 *   next: (all) => console.log(all.map((member) => member.id)),
 *   error: (error) => console.error('not a member:', error),
 * });
 * // Output: [ 'worker-1' ]
 * //         [ 'worker-1', 'worker-2' ]
 *
 * members(client, '/fleet/api', { id: 'api-1', data: '10.0.0.7:8080', details: true }).subscribe(
 *   (all) => console.log(all.map((member) => member.data)),
 * );
 * // Output: [ '10.0.0.7:8080' ]
 * ```
 *
 * @param client The client whose session is the membership.
 * @param path The group's path (its members are its children).
 * @param options `id` (unique among the live members; a znode name), `data` (text), `details`.
 * @return The live members, in id order, on every change.
 */
export function members(
  client: ZkClient,
  path: string,
  options: MembersOptions & { details: true },
): Observable<readonly MemberDetails[]>;
export function members(
  client: ZkClient,
  path: string,
  options: MembersOptions,
): Observable<readonly Member[]>;
export function members(
  client: ZkClient,
  path: string,
  options: MembersOptions,
): Observable<readonly Member[]> {
  return joinMembers(() => resolveMembersOptions(client, path, options));
}

/**
 * `members` from resolved options (which may throw, delivered as the observable's error), also
 * reporting our own node: what `partition` needs.
 */
export function joinMembers(
  resolve: () => ResolvedMembers,
  onJoined?: (joined: Joined | undefined) => void,
  onStart?: (join: MemberNode) => void,
): Observable<readonly Member[]> {
  return new Observable<readonly Member[]>((subscriber) => {
    let resolved: ResolvedMembers;
    try {
      resolved = resolve();
    } catch (error) {
      subscriber.error(error);
      return;
    }
    const { client, path, id, data, details } = resolved;
    if (client.isClosed) {
      subscriber.error(
        new ZkError(ZkErrorCode.ClientClosed, `members ${path}: the client is closed`),
      );
      return;
    }
    let latest: readonly Member[] | undefined;
    let emitted: readonly Member[] | undefined;
    let seenSelf = false;
    const emit = () => {
      if (!latest || subscriber.closed) return;
      let list = latest;
      const self = join.current;
      const at = self ? list.findIndex((member) => member.id === id) : -1;
      if (self && at >= 0) {
        seenSelf = true;
        // A listing read before our create's reply can show the node our id had before (a
        // session that ended, whose deletion that read did not see yet): with details, show our
        // own node as we made it.
        if (details && (list[at] as MemberDetails).czxid !== self.czxid) {
          const ours: MemberDetails = {
            id,
            data: data.toString('utf8'),
            sessionId: self.sessionId,
            joinedAt: self.ctime,
            czxid: self.czxid,
          };
          list = list.map((member, index) => (index === at ? ours : member));
        }
      }
      // The first emission once we are in the membership; from then on every change.
      if (!seenSelf) return;
      if (emitted && sameMembers(emitted, list)) return;
      emitted = list;
      subscriber.next(list);
    };
    const join: MemberNode = new MemberNode(client, path, id, data, {
      joined: (joined) => {
        onJoined?.(joined);
        emit();
      },
      failed: (error) => subscriber.error(error),
    });
    const watched = details ? watchMemberDetails(client, path) : watchMemberIds(client, path);
    const view = watched.subscribe({
      next: (found) => {
        latest = found;
        emit();
      },
      error: (error: unknown) => {
        if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) subscriber.complete();
        else subscriber.error(error);
      },
      complete: () => subscriber.complete(),
    });
    if (!subscriber.closed) {
      onStart?.(join);
      join.start();
    }
    return () => {
      view.unsubscribe();
      join.leave();
    };
  });
}
