/**
 * Our node in a queue: created with the listing pipelined behind it (alone, right behind a node
 * of our own client), found again after a create whose outcome is unknown, the lock path made when
 * it is missing, seen by our client's other waiters, watched from its creation when asked, and
 * given up. What decides with it is `queue.ts`.
 */
import { randomUUID } from 'node:crypto';
import {
  type Created,
  isZkError,
  joinPath,
  ZkAbortError,
  type ZkClient,
  type ZkData,
  ZkErrorCode,
} from '@zkrx/core';
import { deleteQuietly, removeOrphan, removeOwnNode } from './clean-up';
import type { Deadline } from './deadline';
import { type LocalNode, localNodes } from './local-hand-off';
import { type LockChild, protectedName, sortChildren } from './lock-children';
import { OwnNodeWatch } from './queue-wait';
import { type Session, sessionOf } from './session';

/** Our node went with its session, or the path went with it: the queue starts over. */
export const RESTART = Symbol('restart');

/** What our node is made of, and how it is made. */
export interface QueueNodeOptions {
  readonly client: ZkClient;
  /** The lock path (already validated): parent of the queue's nodes. */
  readonly path: string;
  /** The recipe's marker in the node name; with `sequential: false`, the rest of the name. */
  readonly marker: string;
  readonly sequential: boolean;
  readonly data: ZkData | undefined;
  /** Watch our node from its creation (`JoinOptions.watchOwnNode`). */
  readonly watchOwnNode: boolean;
  /**
   * Whether our node, made right after `latest` (a live node of our own session on this path),
   * would wait on it: then the create goes without a listing (see `create`). Undefined: always
   * list (a queue that does not wait).
   */
  readonly waitsOnOwn: ((latest: LockChild) => boolean) | undefined;
}

/**
 * What a new node decides on first: its listing (undefined: list), or, with `ownOrder`, our node
 * and the node our client made right before it, known without a listing.
 */
export interface FirstListing {
  readonly children: LockChild[] | undefined;
  readonly ownOrder: boolean;
}

const lostConnection: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
];

const ignore = () => {};

/** Our node in the queue, from its create until it holds or is given up. */
export class QueueNode {
  private readonly client: ZkClient;
  /** Our node, once made (and until given up). */
  created: Created | undefined;
  /** Our node's watch, when `watchOwnNode` asks for one. */
  ownNode: OwnNodeWatch | undefined;
  /** Our node, as a local waiter behind it sees it (`local-hand-off.ts`). */
  local: LocalNode | undefined;
  /** The session that owns our node, once it is made: its end ends our waits. */
  session: Session | undefined;

  constructor(
    private readonly options: QueueNodeOptions,
    private readonly deadline: Deadline,
    /** Where `makePath` leaves the mark of each lock path it made, or may have made. */
    private readonly pathsMade: string[],
  ) {
    this.client = options.client;
  }

  /**
   * Creates our node with the listing pipelined behind it: its sorted children, or undefined to
   * list. Right behind a node of our own client (see `followsOwnNode`), the create goes alone:
   * when ZooKeeper numbered our node right after that node's, the two make the first listing
   * (`ownOrder`), on which we wait for that node; otherwise we list.
   */
  async create(): Promise<FirstListing | typeof RESTART> {
    const { client, path, marker, data, sequential } = this.options;
    for (;;) {
      this.deadline.check();
      const { prefix, name } = protectedName(marker);
      const session = client.sessionId;
      const signal = this.deadline.signal;
      const created = client.promises.create(joinPath(path, name), data, {
        mode: 'ephemeral',
        sequential,
        signal,
      });
      // ZooKeeper answers one session's requests in order: sent right behind the create, the
      // listing is made after our node exists (and if the create failed, it is not used). A read
      // needs no signal of its own (nothing to withdraw: it changes nothing): its wait is given
      // up by the deadline's race.
      const listed = this.followsOwnNode(session)
        ? undefined
        : client.promises.children(path).then(sortChildren, () => undefined);
      try {
        this.created = await created;
      } catch (error) {
        if (ZkAbortError.isInstance(error)) {
          // Given up (the deadline, the caller's abort). Withdrawn before it was written
          // (`sent` false), the create never reached a server: ZooKeeper applies only what it
          // received, so no node bears its prefix, now or later — nothing to search for
          // (deadline.integration.test.ts gives a create up unwritten, reconnects, and finds no
          // node). Sent, it may have been applied, or may still be: once the session that sent
          // it answers, its protected prefix (a UUID made for this one create, under whatever
          // path: no other create can have made such a node) finds the node and removes it.
          if (error.sent) void removeOrphan(client, path, prefix, session);
          throw error;
        }
        if (isZkError(error, ZkErrorCode.NoNode)) {
          // The parent (a container) is missing: make it and try again.
          await this.makePath();
          continue;
        }
        if (isZkError(error, ...lostConnection)) {
          // The create may have happened: find our node by its protected prefix.
          const found = await this.recover(prefix, session);
          if (found === RESTART) continue;
          return { children: found, ownOrder: false };
        }
        if (isZkError(error, ZkErrorCode.SessionExpired)) {
          // Between two sessions: wait for the new one rather than spin.
          await this.deadline.untilConnected();
          continue;
        }
        throw error;
      }
      this.watch(this.created);
      if (listed) return { children: await this.deadline.race(listed), ownOrder: false };
      const ours = this.local as LocalNode;
      const before = localNodes(client).rightBefore(ours);
      return before
        ? { children: [before.child, ours.child], ownOrder: true }
        : { children: undefined, ownOrder: false };
    }
  }

  /**
   * Whether our node will most likely be made right after a live node of this client's session
   * on this path, one our rule would wait on: then the create goes without a listing. Only for a
   * queue that waits; a wrong guess costs one round trip (a listing after the create).
   */
  private followsOwnNode(session: string | undefined): boolean {
    const { waitsOnOwn, sequential, path } = this.options;
    if (!waitsOnOwn || !sequential || session === undefined) return false;
    const latest = localNodes(this.client).latest(path, session);
    return latest ? waitsOnOwn(latest.child) : false;
  }

  /**
   * Our node, made: its session's view, its place among our client's nodes, and its watch from
   * its creation on (when asked to) — its deletion ends any wait (start over), and the moment the
   * server first shows it present is what the trusted hand-off needs.
   */
  private watch(node: Created): void {
    // A waiter's session: suspensions do not end its wait, its end does (our node went with it).
    const session = sessionOf(this.client, {
      id: node.stat.ephemeralOwner,
      onSuspended: 'wait',
    }) as Session;
    this.session = session;
    this.local = localNodes(this.client).add(
      node.path,
      node.stat.ephemeralOwner,
      this.options.sequential,
    );
    if (!this.options.watchOwnNode) return;
    this.ownNode = new OwnNodeWatch(this.client, node, session);
  }

  /** Stops our node's watch (its session ended: nothing left to watch). */
  stopWatching(): void {
    this.ownNode?.stop();
    this.ownNode = undefined;
  }

  /** Gives up our node: its removal is sent now and finished in the background. */
  giveUp(): void {
    this.stopWatching();
    const node = this.created;
    this.created = undefined;
    if (node) void removeOwnNode(this.client, node.path, node.stat.ephemeralOwner);
  }

  /**
   * Makes the lock path (containers), marked as made by this acquisition (see
   * `removeUnusedContainer`); a parent reaped meanwhile is left to the next create.
   */
  private async makePath(): Promise<void> {
    const { client, path } = this.options;
    const mark = randomUUID();
    // Left before the create is sent: whatever happens to it, the acquisition's end looks.
    this.pathsMade.push(mark);
    try {
      await client.promises.create(path, mark, {
        mode: 'container',
        parents: 'container',
        signal: this.deadline.signal,
      });
    } catch (error) {
      if (!isZkError(error, ZkErrorCode.NodeExists, ZkErrorCode.NoNode, ...lostConnection))
        throw error;
    }
  }

  /**
   * After a create with an unknown outcome: adopt our node if our current session made it.
   *
   * Safe because the protected prefix holds a UUID made for that one create, so a node bearing
   * it was made by it; a node owned by our current session is alive and ours. A node of an
   * earlier session (the reply was lost, then the session ended) is not ours to hold: deleted.
   */
  private async recover(
    prefix: string,
    session: string | undefined,
  ): Promise<LockChild[] | typeof RESTART> {
    const { client, path } = this.options;
    try {
      await this.deadline.untilConnected();
      const signal = this.deadline.signal;
      const children = await client.promises.children(path, { signal });
      const ours = children.find((name) => name.startsWith(prefix));
      if (!ours) return RESTART;
      const node = joinPath(path, ours);
      const stat = await client.promises.exists(node, { signal });
      if (!stat) return RESTART;
      if (stat.ephemeralOwner !== client.sessionId) {
        client.track(deleteQuietly(client, node).catch(ignore));
        return RESTART;
      }
      this.created = { path: node, stat };
      this.watch(this.created);
      return sortChildren(children);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      // Gave up (timeout, abort, closed): leave no orphan behind.
      void removeOrphan(client, path, prefix, session);
      throw error;
    }
  }
}
