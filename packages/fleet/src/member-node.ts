/**
 * A member's node kept alive (`<group>/<id>`, ephemeral, named by the member's id): made, made
 * again after its session ends, removed on leave; a duplicate id refused, a previous life of the
 * same id waited for, probes answered. What `members` and `partition` stand on.
 */
import { isZkError, joinPath, type NodeData, type ZkClient, ZkErrorCode } from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { DuplicateMemberError } from './errors';

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

/**
 * Removals of our member nodes under way, by client and path: a join of that path on that client
 * waits for them first (it would adopt the node, one session's, that they are deleting).
 */
const removalsOf = new WeakMap<ZkClient, Map<string, Promise<void>>>();

/** Tracks `work`, a removal of `node`, for `client.close()` and for the next join of `node`. */
function trackRemoval(client: ZkClient, node: string, work: Promise<void>): void {
  client.track(work);
  const removals = removalsOf.get(client) ?? new Map<string, Promise<void>>();
  removalsOf.set(client, removals);
  const all = Promise.all([removals.get(node), work]).then(ignore);
  removals.set(node, all);
  void all.finally(() => {
    if (removals.get(node) === all) removals.delete(node);
  });
}

const lostConnection: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
  ZkErrorCode.SessionExpired,
  ZkErrorCode.ConnectTimeout,
];

/** A request's answer never came: the connection went first (or none came in time). */
const unanswered: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
  ZkErrorCode.ConnectTimeout,
];

/**
 * One member's node kept alive: made when started, made again after the session ends (or the
 * node is deleted by someone), removed on `leave()`; its data shown (and updated) on it, and
 * probes of a process starting with the same id answered. Reports the joined node, or a failure
 * (`DuplicateMemberError`, a ZkError such as `NoAuth`) once.
 */
export class MemberNode {
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
  /**
   * A session on which a create of ours may have been applied without our hearing back (its
   * reply lost with the connection), until we join: leaving then removes that session's node.
   */
  private uncertain: string | undefined;
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
    // Left before the join retried a create whose reply was lost (its connection gone): the
    // node it may have made is ours while that session lives, and nothing else would remove it.
    else if (this.uncertain) removeNodeOfSession(this.client, this.node, this.uncertain);
    this.uncertain = undefined;
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

  /**
   * Writes our data on our node, conditional on the version we know (one write at a time).
   * Written again once connected when the connection went before the answer: the write was
   * not applied (a quorum lost, a request failed before it was sent) — else our node would
   * state old data for as long as our session lives (the soak's boot-fleet found three members
   * stating an item set no one stored any more, given nothing) — or it was applied unheard:
   * then the write again meets BadVersion, and our node's watch sees the version it made (as a
   * probe's, written back).
   */
  private write(joined: Joined): void {
    this.writing = true;
    let unheard = false;
    const work = this.client.promises
      .set(joined.node, this.data, this.knownVersion)
      .then(
        (stat) => {
          this.knownVersion = Math.max(this.knownVersion, stat.version);
        },
        // BadVersion: probed meanwhile, the watch brings that (and we write then); NoNode: our
        // node is gone; SessionExpired: so is our node, made again with our data.
        (error: unknown) => {
          unheard = isZkError(error, ...unanswered);
        },
      )
      .then(() => (unheard ? this.client.connected().then(ignore, ignore) : undefined))
      .finally(() => {
        this.writing = false;
        if ((this.writeAgain || unheard) && this.joined === joined && !this.stopped) {
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
      await removalsOf.get(this.client)?.get(this.node);
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
            if (isZkError(error, ...lostConnection)) {
              if (this.stopped) removeNodeOfSession(this.client, this.node, session);
              else this.uncertain = session;
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
    this.uncertain = undefined;
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
  trackRemoval(client, joined.node, work);
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
  trackRemoval(client, node, work);
}
