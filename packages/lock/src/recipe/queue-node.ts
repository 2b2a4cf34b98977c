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

/**
 * How often a client's first creates on a lock path new to it lately found that path missing: a
 * moving average (each outcome weighs a quarter) kept per client, beside the paths it made a
 * node in lately (those exist, or went since; they teach nothing). Where new paths are mostly
 * missing (a fleet's start: 100,000 item locks, none made yet) a create costs 5 requests — the
 * create (NoNode), the listing behind it (NoNode), the container, the create again, the listing;
 * with the container's create sent in front of ours (`makePathAhead`) it costs 3, missing or
 * not, where a path that exists costs 2 without it. So in front above a third: 3 < 2 + 3·rate.
 */
class MissingPaths {
  private rate = 0;
  /** Paths this client made a node in, the latest last (a bounded list: a few KB a client). */
  private readonly known = new Map<string, true>();
  /** Whether a create on a new path should send the path's create in front. */
  get likely(): boolean {
    return this.rate > 1 / 3;
  }
  /** Whether `path` is new to this client: its create's outcome teaches. */
  isNew(path: string): boolean {
    return !this.known.has(path);
  }
  saw(missing: boolean): void {
    this.rate += ((missing ? 1 : 0) - this.rate) / 4;
  }
  /** A node of ours was made in `path`. */
  madeIn(path: string): void {
    this.known.delete(path);
    this.known.set(path, true);
    if (this.known.size > KNOWN_PATHS) this.known.delete(this.known.keys().next().value as string);
  }
}
const KNOWN_PATHS = 512;
const missingPaths = new WeakMap<ZkClient, MissingPaths>();
function missingPathsOf(client: ZkClient): MissingPaths {
  let found = missingPaths.get(client);
  if (!found) {
    found = new MissingPaths();
    missingPaths.set(client, found);
  }
  return found;
}

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
    const missing = missingPathsOf(client);
    for (let attempt = 0; ; attempt++) {
      this.deadline.check();
      const { prefix, name } = protectedName(marker);
      const session = client.sessionId;
      const signal = this.deadline.signal;
      const follows = this.followsOwnNode(session);
      // The first attempt on a path new to this client learns whether such paths tend to be
      // missing; where they do, the container goes in front.
      const learning = attempt === 0 && !follows && missing.isNew(path);
      const ahead = learning && missing.likely;
      if (ahead) this.makePathAhead(missing);
      const created = client.promises.create(joinPath(path, name), data, {
        mode: 'ephemeral',
        sequential,
        signal,
      });
      // ZooKeeper answers one session's requests in order: sent right behind the create, the
      // listing is made after our node exists (and if the create failed, it is not used). A read
      // needs no signal of its own (nothing to withdraw: it changes nothing): its wait is given
      // up by the deadline's race.
      const listed = follows
        ? undefined
        : client.promises.children(path).then(sortChildren, () => undefined);
      try {
        this.created = await created;
        if (learning && !ahead) missing.saw(false);
        missing.madeIn(path);
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
          if (learning && !ahead) missing.saw(true);
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
    try {
      await this.createPath();
    } catch (error) {
      if (!isZkError(error, ZkErrorCode.NodeExists, ZkErrorCode.NoNode, ...lostConnection))
        throw error;
    }
  }

  /**
   * The lock path's create sent in front of our node's, not waited for: whether it made the
   * path teaches `missing`; its failure is left to our create, which meets it or not.
   *
   * Changes nothing the lock's safety rests on: ZooKeeper applies one session's requests in the
   * order sent, so the path exists when our create lands unless it was reaped in between (an
   * empty container whose children once moved: then our create fails NoNode and makes the path,
   * as without this); what decides is still the listing behind our node. What this acquisition
   * made carries its mark, as `makePath`'s does, for the same clean-up when it gives up.
   * `missing-paths.integration.test.ts` attacks it (paths missing, then present; a path a lock
   * held by another client is in: NodeExists, and we wait behind the holder), and
   * `unused-container.integration.test.ts` gives up right after the path was made in front.
   */
  private makePathAhead(missing: MissingPaths): void {
    this.createPath().then(
      () => missing.saw(true),
      (error: unknown) => {
        if (isZkError(error, ZkErrorCode.NodeExists)) missing.saw(false);
      },
    );
  }

  /** The lock path's create, as a container, its mark left before it is sent. */
  private createPath(): Promise<unknown> {
    const { client, path } = this.options;
    const mark = randomUUID();
    // Left before the create is sent: whatever happens to it, the acquisition's end looks.
    this.pathsMade.push(mark);
    return client.promises.create(path, mark, {
      mode: 'container',
      parents: 'container',
      signal: this.deadline.signal,
    });
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
