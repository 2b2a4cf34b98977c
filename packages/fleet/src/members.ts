/**
 * Group membership: `members(client, path, { id })` joins with an ephemeral node named by the
 * member's id, emits the live membership in id order, joins again after a session expiry, and
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

/** Our node, once joined. */
export interface Joined {
  readonly node: string;
  readonly sessionId: string;
  readonly czxid: number;
  /** Its creation, ms since the epoch by the server's clock. */
  readonly ctime: number;
}

const ignore = () => {};

/**
 * The member nodes each client is joining or holds, by path: two joins of one id on one client
 * would share one node (and one would delete it under the other), so the second is refused.
 */
const joinsOf = new WeakMap<ZkClient, Set<string>>();

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
  private registered = false;
  /** Our node's data version as we last knew it: a newer one is another session's probe. */
  private knownVersion = 0;
  /** A write of our data is in flight (an answer to a probe, or new data). */
  private writing = false;
  /** Our data changed while a write was in flight: write it again after. */
  private writeAgain = false;
  /** Every session this client had while we were a member: their nodes are ours, going. */
  private readonly ownSessions = new Set<string>();
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    private data: Buffer,
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
    const joins = joinsOf.get(this.client) ?? new Set<string>();
    joinsOf.set(this.client, joins);
    if (joins.has(this.node)) {
      // Another member of this very client has the id: refused before anything is sent.
      this.stopped = true;
      this.events.failed(
        new DuplicateMemberError(this.path, this.id, this.client.sessionId ?? 'this client'),
      );
      return;
    }
    joins.add(this.node);
    this.registered = true;
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
    if (this.registered) joinsOf.get(this.client)?.delete(this.node);
    this.registered = false;
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
    if (value !== null && value.stat.czxid === joined.czxid) {
      if (value.stat.version > this.knownVersion) this.answer(joined, value.stat.version);
      return;
    }
    // A value read before our create never comes after its reply (one session's replies and
    // watch events arrive in order): our node is gone, or was replaced.
    if (value === null || value.stat.ephemeralOwner !== joined.sessionId) this.lose();
  }

  /**
   * Another session probed our node (a process starting with our id, asking whether we are
   * alive, see `probe`): we answer by writing our data back, which changes the version again.
   */
  private answer(joined: Joined, version: number): void {
    // (While a write of ours is in flight, its own change comes back here first: absorbed.)
    this.knownVersion = version;
    if (!this.writing) this.write(joined);
  }

  /**
   * Shows new data on our node (now if joined, else when we join). A probe meanwhile is
   * answered with it.
   */
  update(data: Buffer): void {
    if (this.stopped || data.equals(this.data)) return;
    this.data = data;
    const joined = this.joined;
    if (!joined) return;
    if (this.writing) this.writeAgain = true;
    else this.write(joined);
  }

  /** Writes our data on our node, conditional on the version we know (one write at a time). */
  private write(joined: Joined): void {
    this.writing = true;
    const work = this.client.promises
      .set(joined.node, this.data, this.knownVersion)
      .then(
        (stat) => {
          this.knownVersion = Math.max(this.knownVersion, stat.version);
        },
        // BadVersion: probed meanwhile, the watch brings that (and we write then); NoNode: our
        // node is gone.
        ignore,
      )
      .finally(() => {
        this.writing = false;
        if (this.writeAgain && this.joined === joined && !this.stopped) {
          this.writeAgain = false;
          this.write(joined);
        }
      });
    this.client.track(work);
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
          const creating = this.client.promises.create(this.node, this.data, {
            mode: 'ephemeral',
            parents: 'container',
          });
          let created: Awaited<typeof creating>;
          try {
            created = await creating;
          } catch (error) {
            // Left while the create was in flight and its reply was lost: it may have been
            // applied. Our session's node, if there is one, is removed.
            if (this.stopped && isZkError(error, ZkErrorCode.ConnectionLoss)) {
              removeNodeOfSession(this.client, this.node, session);
            }
            throw error;
          }
          const joined = {
            node: created.path,
            sessionId: created.stat.ephemeralOwner,
            czxid: created.stat.czxid,
            ctime: created.stat.ctime,
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
          // Ours: the reply of our create was lost (another join of this client with this id
          // is refused before it sends anything, see `start`).
          return this.adopt({
            node: this.node,
            sessionId: stat.ephemeralOwner,
            czxid: stat.czxid,
            ctime: stat.ctime,
          });
        }
        if (this.ownSessions.has(stat.ephemeralOwner)) {
          await this.untilGone(stat.czxid);
          continue;
        }
        // Another session's: a live member, or a dying one (a process that restarted with the
        // same id while its old session lives on until it times out). Ask it.
        if ((await this.probe()) === 'gone') continue;
        if (this.stopped) return;
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
    this.knownVersion = 0;
    this.events.joined(joined);
  }

  /**
   * Whether the session holding our id is alive: we write the node's data back unchanged (its
   * version goes up) and watch it. A live member answers (its own watch on its node sees the new
   * version, and it writes back: see `answer`); a dying session cannot, and ZooKeeper deletes
   * its node when it expires. `gone` once the node is gone (join then); `live` once answered,
   * or when neither came within twice our session timeout (the other's timeout is not known:
   * the same configuration is assumed), or when we may not write the node.
   */
  private async probe(): Promise<'gone' | 'live'> {
    const deadline = Date.now() + 2 * this.client.sessionTimeoutMs;
    for (let attempt = 0; attempt < 5; attempt++) {
      if (this.stopped) return 'live';
      let node: NodeData;
      try {
        node = await this.client.promises.get(this.node);
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) return 'gone';
        if (isZkError(error, ...lostConnection)) continue;
        throw error;
      }
      let probed: number;
      try {
        probed = (await this.client.promises.set(this.node, node.data, node.stat.version)).version;
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) return 'gone';
        // Changed meanwhile (another probe, or its owner): read it again.
        if (isZkError(error, ZkErrorCode.BadVersion, ...lostConnection)) continue;
        if (isZkError(error, ZkErrorCode.NoAuth)) return 'live';
        throw error;
      }
      return this.untilAnswered(node.stat.czxid, probed, deadline);
    }
    return 'live';
  }

  /** `gone` once the node made at `czxid` is gone; `live` once its version passed `probed`. */
  private untilAnswered(czxid: number, probed: number, deadline: number): Promise<'gone' | 'live'> {
    return new Promise((resolve) => {
      let subscription: Subscription | undefined;
      let done = false;
      const finish = (verdict: 'gone' | 'live') => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        queueMicrotask(() => subscription?.unsubscribe());
        resolve(verdict);
      };
      const timer = setTimeout(() => finish('live'), Math.max(0, deadline - Date.now()));
      subscription = this.client.watchData(this.node).subscribe({
        next: (value) => {
          if (this.stopped) finish('live');
          else if (value === null || value.stat.czxid !== czxid) finish('gone');
          else if (value.stat.version > probed) finish('live');
        },
        error: () => finish('live'),
        complete: () => finish('live'),
      });
      if (done) subscription.unsubscribe();
    });
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

/**
 * Removes the node at `node` if the session `sessionId` owns it, while that is the client's
 * session (a create whose reply was lost may have made it), retried across disconnections,
 * tracked so that `client.close()` waits.
 */
function removeNodeOfSession(client: ZkClient, node: string, sessionId: string): void {
  const work = (async () => {
    for (;;) {
      await client.connected().catch(ignore);
      if (client.isClosed || client.sessionId !== sessionId) return;
      try {
        const stat = await client.promises.exists(node);
        if (!stat || stat.ephemeralOwner !== sessionId) return;
        await client.promises.delete(node, stat.version);
        return;
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) return;
        if (!isZkError(error) || !error.isRetryable) return;
      }
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
      if (member.id !== other.id) return false;
      if (!('czxid' in member) || !('czxid' in other)) return true; // ids alone: alike
      const [x, y] = [member as MemberDetails, other as MemberDetails];
      return x.czxid === y.czxid && x.sessionId === y.sessionId && x.data === y.data;
    })
  );
}

/**
 * The live members under `path`, in id order, now and on every change, without joining: one
 * children watch on the path, nothing per member. A join or a leave costs each watcher one
 * notification and one listing. Every child of the path counts as a member.
 */
function watchMemberIds(client: ZkClient, path: string): Observable<readonly Member[]> {
  return new Observable<readonly Member[]>((subscriber) => {
    // One object per listed id, kept while it is listed: a listing that did not change emits
    // nothing, and a 500-member listing allocates only for the names that are new.
    let known = new Map<string, Member>();
    let last: readonly Member[] | undefined;
    return client.watchChildren(path).subscribe({
      next: (names) => {
        const next = new Map<string, Member>();
        const found = names.map((id) => {
          const member = known.get(id) ?? { id };
          next.set(id, member);
          return member;
        });
        known = next;
        if (last && sameMembers(last, found)) return;
        last = found;
        subscriber.next(found);
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  });
}

/**
 * The live members under `path` with their nodes' details, in id order, now and on every
 * change, without joining: one children watch on the path, and one read of each member node
 * when its name first appears (the reads of one listing go as one request with the client's
 * `batchReads`). No watch per member: a join costs each watcher one notification, one listing
 * and one read. Children that are not ephemeral are not members. Emits once every listed
 * member's node was read.
 *
 * A member that leaves and joins again under the same id faster than a watcher lists the path
 * again (the two changes fall between two of its listings, which then show the same names) is
 * not seen to: that watcher keeps its earlier node (session, join order) until the next change.
 */
function watchMemberDetails(client: ZkClient, path: string): Observable<readonly MemberDetails[]> {
  return new Observable<readonly MemberDetails[]>((subscriber) => {
    /** Each listed name's member: `value` undefined while being read, null when not a member. */
    interface Entry {
      value: MemberDetails | null | undefined;
    }
    const entries = new Map<string, Entry>();
    let names: readonly string[] | undefined;
    let last: readonly MemberDetails[] | undefined;
    let stopped = false;
    /** Listed names still being read: the membership is emitted once there are none. */
    let unread = 0;
    const emit = () => {
      if (names === undefined || unread > 0 || subscriber.closed) return;
      const found: MemberDetails[] = [];
      for (const name of names) {
        const value = entries.get(name)?.value;
        if (value === undefined) return;
        if (value !== null) found.push(value);
      }
      if (last && sameMembers(last, found)) return;
      last = found;
      subscriber.next(found);
    };
    const read = (name: string, entry: Entry) => {
      // A read of a name that was dropped meanwhile (and maybe listed again: a new entry) is
      // not this entry's.
      const current = () => !stopped && entries.get(name) === entry;
      client.promises.get(joinPath(path, name)).then(
        (value) => {
          if (!current()) return;
          unread -= 1;
          entry.value =
            value.stat.ephemeralOwner === '0'
              ? null
              : {
                  id: name,
                  data: value.data.toString('utf8'),
                  sessionId: value.stat.ephemeralOwner,
                  joinedAt: value.stat.ctime,
                  czxid: value.stat.czxid,
                };
          emit();
        },
        (error: unknown) => {
          if (!current()) return;
          unread -= 1;
          // Gone between the listing and the read: the next listing drops it.
          if (isZkError(error, ZkErrorCode.NoNode)) {
            entry.value = null;
            emit();
            return;
          }
          if (isZkError(error, ZkErrorCode.ClientClosed) && client.isClosed) {
            subscriber.complete();
            return;
          }
          subscriber.error(error);
        },
      );
    };
    const children = client.watchChildren(path).subscribe({
      next: (listed) => {
        names = listed;
        const now = new Set(listed);
        for (const [name, entry] of entries) {
          if (now.has(name)) continue;
          // Dropped while being read: its read no longer counts.
          if (entry.value === undefined) unread -= 1;
          entries.delete(name);
        }
        for (const name of listed) {
          if (entries.has(name)) continue;
          const entry: Entry = { value: undefined };
          entries.set(name, entry);
          unread += 1;
          read(name, entry);
        }
        emit();
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
    return () => {
      stopped = true;
      children.unsubscribe();
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
  onStart?: (join: GroupJoin) => void,
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
    const join: GroupJoin = new GroupJoin(client, path, id, data, {
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
