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
 * Beside it, in this folder: our node — its create, recovery and watch (`queue-node.ts`) — the
 * rules (`queue-rules.ts`), the waits and our own node's watch (`queue-wait.ts`), the deadline
 * (`deadline.ts`) and the clean-up (`clean-up.ts`).
 */
import {
  type Created,
  isZkError,
  joinPath,
  nameOf,
  type Stat,
  type ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { removeUnusedContainer } from './clean-up';
import { Deadline } from './deadline';
import { LockConflictError } from './errors';
import { localNodes } from './local-hand-off';
import {
  type LockChild,
  parseChild,
  recipeOfKind,
  SEMAPHORE_CHILDREN,
  sortChildren,
} from './lock-children';
import { type FirstListing, QueueNode, RESTART } from './queue-node';
import { afterHandOff, type Decide, type QueueDecision, withoutAwaited } from './queue-rules';
import {
  type WaitBounds,
  type WaitOutcome,
  waitForChildrenChange,
  waitForDeletion,
  waitForLocalRemoval,
} from './queue-wait';
import type { Session } from './session';

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
   * (`HeldNode.nodeWatch`). While we wait, its deletion then ends the wait at once (we queue
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
export interface HeldNode {
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

/** Whether `decision` is a wait on `node`. */
function waitsOn(decision: QueueDecision, node: LockChild | undefined): boolean {
  return (
    !decision.holds &&
    decision.waitFor !== 'children' &&
    node !== undefined &&
    decision.waitFor.name === node.name
  );
}

/**
 * Joins the queue at `path` and resolves once the recipe's rule says we hold; resolves null
 * when `wait` is false and we do not hold at once. On every other exit (timeout, abort, error)
 * the promise settles at once — within the deadline, whatever the connection does — and the
 * removal of our node is under way: sent before anything this client sends next, retried in the
 * background while our session lives (`client.close()` waits for it).
 */
export async function joinQueue(options: JoinOptions): Promise<HeldNode | null> {
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
  private readonly sequential: boolean;
  /** Our node: made by `run`, the first thing it does. */
  private node!: QueueNode;

  constructor(
    private readonly options: JoinOptions,
    private readonly deadline: Deadline,
    private readonly pathsMade: string[],
  ) {
    this.client = options.client;
    this.sequential = options.sequential ?? true;
  }

  /** Our node in the queue, as `QueueNode` makes it (it knows nothing of the rule but this). */
  private makeNode(): QueueNode {
    const { options } = this;
    const { marker, decide } = options;
    return new QueueNode(
      {
        client: options.client,
        path: options.path,
        marker,
        sequential: this.sequential,
        data: options.data,
        watchOwnNode: options.watchOwnNode === true,
        // Our node, numbered right after `latest`: would our rule wait on it?
        waitsOnOwn: options.wait
          ? (latest) => {
              const ours = {
                ...parseChild(`${marker}0000000000`),
                name: '',
                order: latest.order + 1,
              };
              return waitsOn(decide([latest, ours], 1), latest);
            }
          : undefined,
      },
      this.deadline,
      this.pathsMade,
    );
  }

  async run(): Promise<HeldNode | null | typeof RESTART> {
    let first: FirstListing | typeof RESTART;
    this.node = this.makeNode();
    try {
      first = await this.node.create();
    } catch (error) {
      // Given up after our node was made (e.g. while its listing was out): remove it.
      this.node.giveUp();
      throw error;
    }
    if (first === RESTART) return RESTART;
    const node = this.node.created as Created;
    const ourName = nameOf(node.path);
    // A listing is `fresh` when read for this decision; a watch's listing may be a cached one.
    let children: LockChild[] | undefined = first.children;
    let fresh = true;
    // Our node and our client's node made right before it, known without a listing (see
    // `QueueNode.create`): good only to wait on that node.
    let ownOrder = first.ownOrder;
    let queued = false;
    try {
      for (;;) {
        if (children === undefined) {
          const listed = await this.list();
          if (listed === RESTART) {
            this.node.giveUp();
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
          this.node.giveUp();
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
          this.node.giveUp();
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
          this.node.giveUp();
          return RESTART;
        }
        if (outcome === 'session-lost') {
          this.node.stopWatching();
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
      this.node.giveUp();
      throw error;
    }
  }

  /**
   * Our hold, handing our node's watch over to whoever keeps it. `first`: decided with our node
   * first (nothing before it): a sequential node then hands over to a local waiter when it goes.
   */
  private hold(node: Created, first: boolean): HeldNode {
    const local = this.node.local;
    if (local) local.first = first && this.sequential;
    return {
      node: node.path,
      name: nameOf(node.path),
      stat: node.stat,
      sessionId: node.stat.ephemeralOwner,
      nodeWatch: this.node.ownNode?.handOver(),
    };
  }

  /**
   * Waits for `waitFor` to go: on this client's own removal of it when it is a node of ours (no
   * ZooKeeper watch, see `local-hand-off.ts`), else on a ZooKeeper watch.
   */
  private waitForNode(waitFor: LockChild): Promise<WaitOutcome> {
    const path = joinPath(this.options.path, waitFor.name);
    const node = this.node.created as Created;
    const local = localNodes(this.client).get(path);
    if (local?.canWait(node.stat.ephemeralOwner)) {
      return waitForLocalRemoval(this.bounds(), local, node.path);
    }
    return waitForDeletion(this.bounds(), path);
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

  /** What bounds our waits: the deadline, our session's life, our node's. */
  private bounds(): WaitBounds {
    return {
      client: this.client,
      deadline: this.deadline,
      session: this.node.session as Session,
      ownNode: this.node.ownNode,
    };
  }
}
