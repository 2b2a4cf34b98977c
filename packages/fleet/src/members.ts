/**
 * Group membership: `members(client, path, { id })` joins with an ephemeral node named by the
 * member's id, emits the live membership in join order, joins again after a session expiry, and
 * leaves on unsubscribe.
 */
import {
  isZkError,
  joinPath,
  type NodeData,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { Observable, type Subscription } from 'rxjs';
import { DuplicateMemberError } from './errors';
import { checkClient, checkData, checkFleetPath, checkName, checkOptionsObject } from './options';

/** One live member of a group. */
export interface Member {
  /** The member's id: the name of its node, unique among the live members. */
  readonly id: string;
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
  /** Shown to the others (`Member.data`) and by `zkrx members`: an address, a host name. */
  data?: string;
}

/** Our node, once joined. */
export interface Joined {
  readonly node: string;
  readonly sessionId: string;
  readonly czxid: number;
}

const ignore = () => {};

const lostConnection: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
  ZkErrorCode.SessionExpired,
  ZkErrorCode.ConnectTimeout,
];

/**
 * One member's node kept alive: made when started, made again after the session ends (or the
 * node is deleted by someone), removed on `leave()`. Reports the joined node, or a failure
 * (`DuplicateMemberError`, a ZkError such as `NoAuth`) once.
 */
export class GroupJoin {
  private stopped = false;
  private joined: Joined | undefined;
  private joining = false;
  /** Every session this client had while we were a member: their nodes are ours, going. */
  private readonly ownSessions = new Set<string>();
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    private readonly data: Buffer,
    private readonly events: {
      readonly joined: (joined: Joined | undefined) => void;
      readonly failed: (error: unknown) => void;
    },
  ) {}

  get node(): string {
    return joinPath(this.path, this.id);
  }

  /** The node we hold now, if any. */
  get current(): Joined | undefined {
    return this.joined;
  }

  start(): void {
    this.subscriptions.push(
      this.client.session$.subscribe({
        next: ({ state, sessionId }) => {
          if (sessionId !== undefined) this.ownSessions.add(sessionId);
          if (state === 'closed' || state === 'auth-failed') return;
          // The session ended: so did our node (ZooKeeper deletes a session's ephemerals in the
          // transaction that ends it). Join again on the new session.
          if (
            this.joined &&
            (state === 'expired' ||
              state === 'connecting' ||
              (sessionId !== undefined && sessionId !== this.joined.sessionId))
          ) {
            this.lose();
          }
        },
        error: ignore,
      }),
      // Our node deleted by someone else (an operator) while our session lives: join again.
      this.client.watchData(this.node).subscribe({
        next: (value) => this.onNodeValue(value),
        error: ignore,
      }),
    );
    void this.join();
  }

  /** Leaves: our node is removed (in the background, tracked by the client). Idempotent. */
  leave(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    const joined = this.joined;
    this.joined = undefined;
    if (joined) removeMemberNode(this.client, joined);
  }

  private onNodeValue(value: NodeData | null): void {
    const joined = this.joined;
    if (!joined || this.stopped) return;
    if (value !== null && value.stat.czxid === joined.czxid) return;
    // A value read before our create never comes after its reply (one session's replies and
    // watch events arrive in order): our node is gone, or was replaced.
    if (value === null || value.stat.ephemeralOwner !== joined.sessionId) this.lose();
  }

  private lose(): void {
    if (!this.joined) return;
    this.joined = undefined;
    this.events.joined(undefined);
    void this.join();
  }

  /**
   * Creates our node; adopts it when it is already ours (a create whose reply was lost); waits
   * for it to go when an earlier session of ours still has it; fails when another member has
   * the id. Retried across disconnections and new sessions until joined, stopped or failed.
   */
  private async join(): Promise<void> {
    if (this.joining || this.stopped) return;
    this.joining = true;
    try {
      for (;;) {
        if (this.stopped || this.client.isClosed) return;
        try {
          await this.client.connected();
        } catch (error) {
          // Not connected within the client's connect timeout: keep trying. Anything else (the
          // client closed, or refused for good) ends the attempts.
          if (isZkError(error, ZkErrorCode.ConnectTimeout)) continue;
          if (this.stopped || this.client.isClosed) return;
          throw error;
        }
        if (this.stopped) return;
        const session = this.client.sessionId as string;
        this.ownSessions.add(session);
        try {
          const created = await this.client.promises.create(this.node, this.data, {
            mode: 'ephemeral',
            parents: 'container',
          });
          const joined = {
            node: created.path,
            sessionId: created.stat.ephemeralOwner,
            czxid: created.stat.czxid,
          };
          if (this.stopped) {
            removeMemberNode(this.client, joined);
            return;
          }
          return this.adopt(joined);
        } catch (error) {
          if (this.stopped || isZkError(error, ZkErrorCode.ClientClosed)) return;
          if (isZkError(error, ...lostConnection)) continue;
          if (!isZkError(error, ZkErrorCode.NodeExists)) throw error;
        }
        // The id's node exists: ours (the reply of our create was lost), an earlier session's
        // of ours (going with that session), or another member's.
        let stat: Awaited<ReturnType<ZkClient['promises']['exists']>>;
        try {
          stat = await this.client.promises.exists(this.node);
        } catch (error) {
          if (this.stopped || isZkError(error, ZkErrorCode.ClientClosed)) return;
          if (isZkError(error, ...lostConnection)) continue;
          throw error;
        }
        if (this.stopped) return;
        if (stat === null) continue;
        if (stat.ephemeralOwner === this.client.sessionId) {
          return this.adopt({
            node: this.node,
            sessionId: stat.ephemeralOwner,
            czxid: stat.czxid,
          });
        }
        if (this.ownSessions.has(stat.ephemeralOwner)) {
          await this.untilGone(stat.czxid);
          continue;
        }
        throw new DuplicateMemberError(this.path, this.id, stat.ephemeralOwner);
      }
    } catch (error) {
      if (!this.stopped) this.events.failed(error);
    } finally {
      this.joining = false;
    }
  }

  private adopt(joined: Joined): void {
    this.joined = joined;
    this.events.joined(joined);
  }

  /** Resolves once the node made at `czxid` is gone (or we stopped, or the client closed). */
  private untilGone(czxid: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let subscription: Subscription | undefined;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        queueMicrotask(() => subscription?.unsubscribe());
        resolve();
      };
      subscription = this.client.watchExists(this.node).subscribe({
        next: (stat) => {
          if (this.stopped || stat === null || stat.czxid !== czxid) finish();
        },
        error: finish,
        complete: finish,
      });
      if (done) subscription.unsubscribe();
    });
  }
}

/**
 * Removes a member node of ours: only while the session that made it is the client's (then the
 * node at that path, if any, is ours — an ephemeral of a live session is replaced by no one else
 * while it exists), retried across disconnections, tracked so that `client.close()` waits.
 */
export function removeMemberNode(client: ZkClient, joined: Joined): void {
  const work = (async () => {
    for (;;) {
      if (client.isClosed || client.sessionId !== joined.sessionId) return;
      try {
        const stat = await client.promises.exists(joined.node);
        if (!stat || stat.czxid !== joined.czxid) return;
        await client.promises.delete(joined.node, stat.version);
        return;
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) return;
        if (!isZkError(error) || !error.isRetryable) return;
      }
      await client.connected().catch(ignore);
    }
  })();
  client.track(work);
}

/** Two member lists alike (what a new emission must differ in). */
function sameMembers(a: readonly Member[], b: readonly Member[]): boolean {
  return (
    a.length === b.length &&
    a.every((member, index) => {
      const other = b[index] as Member;
      return (
        member.id === other.id &&
        member.czxid === other.czxid &&
        member.sessionId === other.sessionId &&
        member.data === other.data
      );
    })
  );
}

/**
 * The live members under `path`, in join order, now and on every change, without joining: a
 * children watch on the path plus a data watch on each member node (a member that leaves and
 * joins again between two listings keeps its name, not its node: the data watch sees it).
 * Children that are not ephemeral are not members. Emits once every member's node was read.
 */
export function watchMembers(client: ZkClient, path: string): Observable<readonly Member[]> {
  return new Observable<readonly Member[]>((subscriber) => {
    interface Entry {
      value: NodeData | null | undefined;
      subscription: Subscription | undefined;
    }
    const entries = new Map<string, Entry>();
    let names: readonly string[] | undefined;
    let last: readonly Member[] | undefined;
    const emit = () => {
      if (names === undefined || subscriber.closed) return;
      const found: Member[] = [];
      for (const name of names) {
        const value = entries.get(name)?.value;
        if (value === undefined) return;
        if (value === null || value.stat.ephemeralOwner === '0') continue;
        found.push({
          id: name,
          data: value.data.toString('utf8'),
          sessionId: value.stat.ephemeralOwner,
          joinedAt: value.stat.ctime,
          czxid: value.stat.czxid,
        });
      }
      found.sort((a, b) => a.czxid - b.czxid);
      if (last && sameMembers(last, found)) return;
      last = found;
      subscriber.next(found);
    };
    const children = client.watchChildren(path).subscribe({
      next: (listed) => {
        names = listed;
        for (const [name, entry] of entries) {
          if (listed.includes(name)) continue;
          entry.subscription?.unsubscribe();
          entries.delete(name);
        }
        for (const name of listed) {
          if (entries.has(name)) continue;
          const entry: Entry = { value: undefined, subscription: undefined };
          entries.set(name, entry);
          entry.subscription = client.watchData(joinPath(path, name)).subscribe({
            next: (value) => {
              entry.value = value;
              emit();
            },
            error: (error: unknown) => subscriber.error(error),
          });
        }
        emit();
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
    return () => {
      children.unsubscribe();
      for (const entry of entries.values()) entry.subscription?.unsubscribe();
      entries.clear();
    };
  });
}

/** The checked options of `members`. */
export interface ResolvedMembers {
  readonly client: ZkClient;
  readonly path: string;
  readonly id: string;
  readonly data: Buffer;
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
  return { client: checkedClient, path: checkedPath, id, data };
}

/**
 * Joins the group at `path` and emits its live membership: subscribing creates this member's
 * node (`<path>/<id>`, ephemeral, holding `data`), every emission is the whole membership in
 * join order — the first one once this member is in it —, unsubscribing leaves (the node is
 * removed). After a session expiry the member joins again by itself (at the back: join order is
 * the node's creation). Completes when the client closes.
 *
 * An id another live member has is an error, not a second member: the observable errors with
 * `DuplicateMemberError` (and joins nothing). Bad input errors with ZkError `InvalidPath` or
 * `BadArguments` before anything is sent. Each subscription is one member: share it
 * (`share()`) to read one membership from several places.
 *
 * ## Example
 * ```ts
 * members(client, '/fleet/workers', { id: 'worker-1', data: '10.0.0.7:8080' }).subscribe({
 *   next: (all) => console.log(all.map((member) => member.id)),
 *   error: (error) => console.error('not a member:', error),
 * });
 * // Output: [ 'worker-1' ]
 * //         [ 'worker-1', 'worker-2' ]
 * ```
 *
 * @param client The client whose session is the membership.
 * @param path The group's path (its members are its children).
 * @param options `id` (unique among the live members; a znode name), `data` (text).
 * @return The live members, in join order, on every change.
 */
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
): Observable<readonly Member[]> {
  return new Observable<readonly Member[]>((subscriber) => {
    let resolved: ResolvedMembers;
    try {
      resolved = resolve();
    } catch (error) {
      subscriber.error(error);
      return;
    }
    const { client, path, id, data } = resolved;
    if (client.isClosed) {
      subscriber.error(
        new ZkError(ZkErrorCode.ClientClosed, `members ${path}: the client is closed`),
      );
      return;
    }
    let latest: readonly Member[] | undefined;
    let seenSelf = false;
    const emit = () => {
      if (!latest || subscriber.closed) return;
      if (!seenSelf) {
        const self = join.current;
        if (!self || !latest.some((member) => member.czxid === self.czxid)) return;
        seenSelf = true;
      }
      subscriber.next(latest);
    };
    const join: GroupJoin = new GroupJoin(client, path, id, data, {
      joined: (joined) => {
        onJoined?.(joined);
        emit();
      },
      failed: (error) => subscriber.error(error),
    });
    const view = watchMembers(client, path).subscribe({
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
    if (!subscriber.closed) join.start();
    return () => {
      view.unsubscribe();
      join.leave();
    };
  });
}
