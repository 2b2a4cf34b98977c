/**
 * The queue every lock recipe stands in: a protected EPHEMERAL_SEQUENTIAL node, a listing
 * pipelined behind its create, and a herd-free wait on the one node that must go first (on a
 * ZooKeeper watch, or, for a node of our own client, on that client's removal of it).
 *
 * What decides who holds is the recipe's rule over a listing that CONTAINS our node. Whatever
 * the rule, it leans on two ZooKeeper guarantees, both about one parent znode — not a path, since
 * an idle container path is reaped and made again, its sequence numbers starting over:
 * - the parent's sequence counter only grows, so a node created after ours sorts after ours;
 * - a znode with children cannot be deleted (a container is reaped only when empty), so while our
 *   node exists the parent it lives in is the one whose counter numbered it.
 * A listing that contains our (uniquely named) node was made while our node existed, hence in
 * that parent, after our create. Nothing learnt outside such a listing decides a hold, but for
 * two shortcuts: the trusted hand-off (see `OwnNodeWatch.mayTrust`), taken only by a waiter that
 * watches its own node (`JoinOptions.watchOwnNode`), and the local hand-off between nodes of one
 * client (`local-hand-off.ts`), decided by the server's transaction.
 *
 * Beside it, in this folder: the rules (`queue-rules.ts`), the waits and our own node's watch
 * (`queue-wait.ts`), the deadline (`deadline.ts`) and the clean-up (`clean-up.ts`).
 */
import { randomUUID } from 'node:crypto';
import {
  type Created,
  isZkError,
  joinPath,
  nameOf,
  type Stat,
  ZkAbortError,
  type ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { deleteQuietly, removeOrphan, removeOwnNode, removeUnusedContainer } from './clean-up';
import { Deadline } from './deadline';
import { LockConflictError } from './errors';
import { type LocalNode, localNodes } from './local-hand-off';
import {
  type LockChild,
  parseChild,
  protectedName,
  recipeOfKind,
  SEMAPHORE_CHILDREN,
  sortChildren,
} from './node-names';
import { afterHandOff, type Decide, type QueueDecision, withoutAwaited } from './queue-rules';
import {
  OwnNodeWatch,
  type WaitBounds,
  type WaitOutcome,
  waitForChildrenChange,
  waitForDeletion,
  waitForLocalRemoval,
} from './queue-wait';
import { type Session, sessionOf } from './session';

export interface JoinOptions {
  readonly client: ZkClient;
  /** The lock path (already validated): parent of the queue's nodes. */
  readonly path: string;
  /**
   * The recipe's marker in the node name (`lock-`, `__READ__`, ...); with `sequential: false`,
   * the whole rest of the name after the protected prefix.
   */
  readonly marker: string;
  /** Let ZooKeeper append the sequence number (default true). */
  readonly sequential?: boolean;
  readonly data?: ZkData;
  readonly decide: Decide;
  /** Give up after this long (LockTimeoutError). Undefined: wait as long as it takes. */
  readonly timeoutMs?: number;
  /** Aborting gives up (rejects with the signal's reason) and removes our node. */
  readonly signal?: AbortSignal;
  /** False: do not wait; resolve null when the lock is not free at once. */
  readonly wait: boolean;
  /**
   * When our session ends while we wait (our node with it): `restart` with a new node
   * (default), or `fail` with ZkError `SessionExpired` (for recipes whose other nodes died too).
   */
  readonly onSessionLoss?: 'restart' | 'fail';
  /**
   * Called with our node's path each time it joins the queue: once its place is known — the
   * first listing with our node in it was read (and found no conflict), or ZooKeeper numbered it
   * right after a node of our own client — before the decision and any wait.
   */
  readonly onQueued?: (node: string) => void;
  /**
   * Watch our node from its creation (default false), for a caller that will want to hear of its
   * deletion from the start (a revocable lease): the hold hands the watch over
   * (`QueueHold.nodeWatch`). While we wait, its deletion then ends the wait at once (we queue
   * again), and a hand-off may be trusted without a listing (see `OwnNodeWatch.mayTrust`).
   * Costs two server packets per node: the watch's read, and its notification when the node
   * goes. Unwatched, a waiter whose node was deleted finds out at its next listing (when the node
   * it waits for goes), and every hand-off lists, as Curator's does.
   */
  readonly watchOwnNode?: boolean;
  /**
   * Called when the node we waited for went and the listing that follows will most likely let us
   * hold (nothing but what was before that node stood before ours: most often, the node held and
   * all before it had gone): what it sends goes out with that listing, in the same round trip. For work a recipe does once it holds and may start early,
   * at its own risk (the semaphore's lease, whose count is safe without its gate); it must undo
   * that work itself if the queue does not hold after all.
   */
  readonly onLikelyHold?: () => void;
}

/** Our node, once the recipe's rule says we hold. */
export interface QueueHold {
  /** Full path of our node. */
  readonly node: string;
  readonly name: string;
  /** Our node's metadata at creation (czxid is the fencing token). */
  readonly stat: Stat;
  /** The session that owns our node (hex). */
  readonly sessionId: string;
  /**
   * The engine's watch on our node (`client.watchData(node)`), when it watched it
   * (`JoinOptions.watchOwnNode`); undefined otherwise. Whoever keeps the hold subscribes to the
   * same watch before unsubscribing this one (the client shares one ZooKeeper watch per path), so
   * the node is watched without a gap and without a second request.
   */
  readonly nodeWatch: { unsubscribe(): void } | undefined;
}

const RESTART = Symbol('restart');

/**
 * What a new node decides on first: its listing (undefined: list), or, with `ownOrder`, our node
 * and the node our client made right before it, known without a listing.
 */
interface FirstListing {
  readonly children: LockChild[] | undefined;
  readonly ownOrder: boolean;
}

/** Whether `decision` is a wait on `node`. */
function waitsOn(decision: QueueDecision, node: LockChild | undefined): boolean {
  return (
    !decision.holds &&
    decision.waitFor !== 'children' &&
    node !== undefined &&
    decision.waitFor.name === node.name
  );
}

const lostConnection: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
];

const ignore = () => {};

/**
 * Joins the queue at `path` and resolves once the recipe's rule says we hold; resolves null
 * when `wait` is false and we do not hold at once. On every other exit (timeout, abort, error)
 * the promise settles at once — within the deadline, whatever the connection does — and the
 * removal of our node is under way: sent before anything this client sends next, retried in the
 * background while our session lives (`client.close()` waits for it).
 */
export async function joinQueue(options: JoinOptions): Promise<QueueHold | null> {
  const deadline = new Deadline(options.client, options.path, options.timeoutMs, options.signal);
  // Marks of the lock paths this acquisition made (see `removeUnusedContainer`): kept across
  // attempts, since a later attempt may give up before any node of ours went in.
  const pathsMade: string[] = [];
  let held = false;
  try {
    for (;;) {
      const outcome = await new QueueAttempt(options, deadline, pathsMade).run();
      held = outcome !== RESTART && outcome !== null;
      if (outcome !== RESTART) return outcome;
      if (options.onSessionLoss === 'fail') {
        throw new ZkError(
          ZkErrorCode.SessionExpired,
          `lock ${options.path}: the session ended while waiting`,
          { path: options.path },
        );
      }
    }
  } catch (error) {
    // A call given up by the acquisition's signal rejects with its reason (LockTimeoutError, the
    // caller's abort reason), whichever call it was.
    throw deadline.errorOf(error);
  } finally {
    deadline.stop();
    if (!held) {
      for (const mark of pathsMade) void removeUnusedContainer(options.client, options.path, mark);
    }
  }
}

/** One node's life in the queue: created, waiting, then holding or removed. */
class QueueAttempt {
  private readonly client: ZkClient;
  private node: Created | undefined;
  /** Our node's watch, when `watchOwnNode` asks for one. */
  private ownNode: OwnNodeWatch | undefined;
  /** Our node, as a local waiter behind it sees it (`local-hand-off.ts`). */
  private local: LocalNode | undefined;
  /** The session that owns our node, once it is made: its end ends our waits. */
  private session: Session | undefined;

  constructor(
    private readonly options: JoinOptions,
    private readonly deadline: Deadline,
    /** Where `makePath` leaves the mark of each lock path it made, or may have made. */
    private readonly pathsMade: string[],
  ) {
    this.client = options.client;
  }

  async run(): Promise<QueueHold | null | typeof RESTART> {
    let first: FirstListing | typeof RESTART;
    try {
      first = await this.createNode();
    } catch (error) {
      // Given up after our node was made (e.g. while its listing was out): remove it.
      this.giveUp();
      throw error;
    }
    if (first === RESTART) return RESTART;
    const node = this.node as Created;
    const ourName = nameOf(node.path);
    // A listing is `fresh` when read for this decision; a watch's listing may be a cached one.
    let children: LockChild[] | undefined = first.children;
    let fresh = true;
    // Our node and our client's node made right before it, known without a listing (see
    // `createNode`): good only to wait on that node.
    let ownOrder = first.ownOrder;
    let queued = false;
    try {
      for (;;) {
        if (children === undefined) {
          const listed = await this.list();
          if (listed === RESTART) {
            this.giveUp();
            return RESTART;
          }
          children = listed;
          fresh = true;
          ownOrder = false;
        }
        const ourIndex = children.findIndex((child) => child.name === ourName);
        if (ourIndex < 0) {
          // A listing read after our create without our node: it is gone (deleted, or our
          // session ended). Start over with a new node. A watch's listing may predate our node.
          if (!fresh) {
            children = undefined;
            continue;
          }
          this.giveUp();
          return RESTART;
        }
        // A semaphore's layout here cannot queue with ours: fail fast rather than overlap.
        if (!ownOrder && children.some((child) => SEMAPHORE_CHILDREN.includes(child.name))) {
          const asked = recipeOfKind(parseChild(nameOf(node.path)).kind);
          throw new LockConflictError(this.options.path, asked, 'semaphore');
        }
        if (!queued) {
          queued = true;
          this.queued(node.path);
        }
        // Safe whatever the rule: `children` contains our node (see the module header).
        const decision = this.options.decide(children, ourIndex);
        if (ownOrder && !waitsOn(decision, children[ourIndex - 1])) {
          // Not a listing: only a wait on the node before ours is decided on it.
          children = undefined;
          continue;
        }
        if (decision.holds) return this.hold(node, ourIndex === 0);
        if (!this.options.wait) {
          this.giveUp();
          return null;
        }
        const waitFor = decision.waitFor;
        const outcome =
          waitFor === 'children'
            ? await waitForChildrenChange(this.bounds(), this.options.path, children)
            : await this.waitForNode(waitFor);
        if (Array.isArray(outcome)) {
          children = outcome;
          fresh = false;
          ownOrder = false;
          continue;
        }
        if ((outcome === 'deleted-trusted' || outcome === 'handed') && waitFor !== 'children') {
          // The hand-off: the old listing minus the node that went (and, handed over by our own
          // client, minus what was before it), if that lets us in.
          const rest =
            outcome === 'handed'
              ? afterHandOff(children, waitFor)
              : withoutAwaited(children, waitFor);
          const index = rest.findIndex((child) => child.name === ourName);
          if (this.options.decide(rest, index).holds) return this.hold(node, index === 0);
        }
        // Otherwise list again: others before us may have gone meanwhile, and a hold needs a
        // listing that contains our node.
        if (outcome === 'deleted' || outcome === 'deleted-trusted' || outcome === 'handed') {
          if (waitFor !== 'children' && this.options.onLikelyHold) {
            // Most often the node we waited for held, and what was before it went before it:
            // guessed, not known (our listing is as old as our wait) — the listing decides.
            const rest = afterHandOff(children, waitFor);
            const index = rest.findIndex((child) => child.name === ourName);
            if (this.options.decide(rest, index).holds) this.likelyHold();
          }
          children = undefined;
          continue;
        }
        if (outcome === 'own-deleted') {
          this.giveUp();
          return RESTART;
        }
        if (outcome === 'session-lost') {
          this.stopWatchingNode();
          return RESTART;
        }
        if (outcome === 'closed')
          throw new ZkError(
            ZkErrorCode.ClientClosed,
            `lock ${this.options.path}: the client is closed`,
          );
        if (outcome === 'aborted') throw this.deadline.reason;
        throw outcome.error;
      }
    } catch (error) {
      this.giveUp();
      throw error;
    }
  }

  /**
   * Creates our node with the listing pipelined behind it: its sorted children, or undefined to
   * list. Right behind a node of our own client (see `followsOwnNode`), the create goes alone:
   * when ZooKeeper numbered our node right after that node's, the two make the first listing
   * (`ownOrder`), on which we wait for that node; otherwise we list.
   */
  private async createNode(): Promise<FirstListing | typeof RESTART> {
    const { client, path, marker, data } = this.options;
    const sequential = this.options.sequential ?? true;
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
        this.node = await created;
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
      this.watchNode(this.node);
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
    if (!this.options.wait || !(this.options.sequential ?? true) || session === undefined) {
      return false;
    }
    const latest = localNodes(this.client).latest(this.options.path, session);
    if (!latest) return false;
    const ours: LockChild = {
      ...parseChild(`${this.options.marker}0000000000`),
      name: '',
      order: latest.child.order + 1,
    };
    return waitsOn(this.options.decide([latest.child, ours], 1), latest.child);
  }

  /**
   * Our hold, handing our node's watch over to whoever keeps it. `first`: decided with our node
   * first (nothing before it): a sequential node then hands over to a local waiter when it goes.
   */
  private hold(node: Created, first: boolean): QueueHold {
    if (this.local) this.local.first = first && (this.options.sequential ?? true);
    return {
      node: node.path,
      name: nameOf(node.path),
      stat: node.stat,
      sessionId: node.stat.ephemeralOwner,
      nodeWatch: this.ownNode?.handOver(),
    };
  }

  /**
   * Watches our node from its creation on (when asked to): its deletion ends any wait (start
   * over), and the moment the server first shows it present is what the trusted hand-off needs.
   */
  private watchNode(node: Created): void {
    // A waiter's session: suspensions do not end its wait, its end does (our node went with it).
    const session = sessionOf(this.client, {
      id: node.stat.ephemeralOwner,
      onSuspended: 'wait',
    }) as Session;
    this.session = session;
    this.local = localNodes(this.client).add(
      node.path,
      node.stat.ephemeralOwner,
      this.options.sequential ?? true,
    );
    if (!this.options.watchOwnNode) return;
    this.ownNode = new OwnNodeWatch(this.client, node, session);
  }

  /**
   * Waits for `waitFor` to go: on this client's own removal of it when it is a node of ours (no
   * ZooKeeper watch, see `local-hand-off.ts`), else on a ZooKeeper watch.
   */
  private waitForNode(waitFor: LockChild): Promise<WaitOutcome> {
    const path = joinPath(this.options.path, waitFor.name);
    const node = this.node as Created;
    const local = localNodes(this.client).get(path);
    if (local?.canWait(node.stat.ephemeralOwner)) {
      return waitForLocalRemoval(this.bounds(), local, node.path);
    }
    return waitForDeletion(this.bounds(), path);
  }

  private stopWatchingNode(): void {
    this.ownNode?.stop();
    this.ownNode = undefined;
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
      this.node = { path: node, stat };
      this.watchNode(this.node);
      return sortChildren(children);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      // Gave up (timeout, abort, closed): leave no orphan behind.
      void removeOrphan(client, path, prefix, session);
      throw error;
    }
  }

  private likelyHold(): void {
    try {
      this.options.onLikelyHold?.();
    } catch {
      // A throwing callback must not break the queue.
    }
  }

  private queued(node: string): void {
    try {
      this.options.onQueued?.(node);
    } catch {
      // A throwing callback must not break the queue.
    }
  }

  /** A fresh listing of the queue, sorted; RESTART when the path (so our node) is gone. */
  private async list(): Promise<LockChild[] | typeof RESTART> {
    try {
      // A read: nothing to withdraw, its wait is given up by the deadline's race.
      const names = await this.deadline.race(this.client.promises.children(this.options.path));
      return sortChildren(names);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      throw error;
    }
  }

  /** Gives up our node: its removal is sent now and finished in the background. */
  private giveUp(): void {
    this.stopWatchingNode();
    const node = this.node;
    this.node = undefined;
    if (node) void removeOwnNode(this.client, node.path, node.stat.ephemeralOwner);
  }

  /** What bounds our waits: the deadline, our session's life, our node's. */
  private bounds(): WaitBounds {
    return {
      client: this.client,
      deadline: this.deadline,
      session: this.session as Session,
      ownNode: this.ownNode,
    };
  }
}
