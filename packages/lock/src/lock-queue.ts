/**
 * The queue every lock recipe stands in: a protected EPHEMERAL_SEQUENTIAL node, a listing
 * pipelined behind its create, and a herd-free wait on the one node that must go first.
 *
 * What decides who holds is the recipe's rule over a listing that CONTAINS our node. Whatever
 * the rule, it leans on two ZooKeeper guarantees, both about one parent znode — not a path, since
 * an idle container path is reaped and made again, its sequence numbers starting over:
 * - the parent's sequence counter only grows, so a node created after ours sorts after ours;
 * - a znode with children cannot be deleted (a container is reaped only when empty), so while our
 *   node exists the parent it lives in is the one whose counter numbered it.
 * A listing that contains our (uniquely named) node was made while our node existed, hence in
 * that parent, after our create. Nothing learnt outside such a listing decides a hold, but for
 * one shortcut, the trusted hand-off (see `QueueAttempt.mayTrust`), taken only by a waiter that
 * watches its own node (`JoinOptions.watchOwnNode`).
 */
import { randomUUID } from 'node:crypto';
import {
  type Created,
  isConnectedState,
  isZkError,
  joinPath,
  nameOf,
  type Stat,
  type ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { LockConflictError, LockTimeoutError } from './errors';
import {
  type LockChild,
  parseChild,
  protectedName,
  recipeOfKind,
  SEMAPHORE_CHILDREN,
  sortChildren,
} from './node-names';

/** What a recipe concludes from the sorted children and its own position among them. */
export type QueueDecision =
  | { readonly holds: true }
  /**
   * Not yet: wait for `waitFor` (the one node whose deletion may let us in) to go, then list
   * again; or for any change of the children (`'children'`, a count-based rule such as
   * Curator's semaphore). The wait is only for liveness and herd-freedom: every decision is
   * made again on a new listing.
   */
  | { readonly holds: false; readonly waitFor: LockChild | 'children' };

/**
 * The recipe's rule: do we hold, and if not, what do we wait for. Called with a listing that
 * contains our node (`children[ourIndex]`), sorted in creation order.
 */
export type Decide = (children: readonly LockChild[], ourIndex: number) => QueueDecision;

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
   * Called with our node's path each time it joins the queue: once the first listing with our
   * node in it was read (and found no conflict), before the decision and any wait.
   */
  readonly onQueued?: (node: string) => void;
  /**
   * Watch our node from its creation (default false), for a caller that will want to hear of its
   * deletion (a lease whose loss is listened to, a revocable one): the hold hands the watch over
   * (`QueueHold.nodeWatch`). While we wait, its deletion then ends the wait at once (we queue
   * again), and a hand-off may be trusted without a listing (see `QueueAttempt.mayTrust`).
   * Costs two server packets per node: the watch's read, and its notification when the node
   * goes. Unwatched, a waiter whose node was deleted finds out at its next listing (when the node
   * it waits for goes), and every hand-off lists, as Curator's does.
   */
  readonly watchOwnNode?: boolean;
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
type WaitOutcome =
  | 'deleted'
  /** Deleted, and told while the hand-off may be trusted (see `QueueAttempt.mayTrust`). */
  | 'deleted-trusted'
  /** Our own node is gone. */
  | 'own-deleted'
  | 'session-lost'
  | 'timeout'
  | 'aborted'
  | 'closed'
  | { error: unknown };

const lostConnection: readonly ZkErrorCode[] = [
  ZkErrorCode.ConnectionLoss,
  ZkErrorCode.OperationTimeout,
  ZkErrorCode.SessionMoved,
];

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ZkError(ZkErrorCode.Aborted, 'aborted');
}

const ignore = () => {};

/**
 * Calls `onDeadline` once `performance.now()` has reached `deadline` (a timer may fire a little
 * early on its own clock: then it is armed again). Returns the cancel function.
 */
function atDeadline(deadline: number, onDeadline: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    const left = deadline - performance.now();
    if (left <= 0) return onDeadline();
    timer = setTimeout(arm, Math.ceil(left));
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * Joins the queue at `path` and resolves once the recipe's rule says we hold; resolves null
 * when `wait` is false and we do not hold at once. On every other exit (timeout, abort, error)
 * the promise settles at once — within the deadline, whatever the connection does — and the
 * removal of our node is under way: sent before anything this client sends next, retried in the
 * background while our session lives (`client.close()` waits for it).
 */
export async function joinQueue(options: JoinOptions): Promise<QueueHold | null> {
  const started = performance.now();
  const deadline =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : started + options.timeoutMs;
  if (options.signal?.aborted) throw abortReason(options.signal);
  const witness = new ConnectionWitness(options.client);
  // Marks of the lock paths this acquisition made (see `removeUnusedContainer`): kept across
  // attempts, since a later attempt may give up before any node of ours went in.
  const pathsMade: string[] = [];
  let held = false;
  try {
    for (;;) {
      const outcome = await new QueueAttempt(options, started, deadline, witness, pathsMade).run();
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
  } finally {
    witness.stop();
    if (!held) {
      for (const mark of pathsMade) void removeUnusedContainer(options.client, options.path, mark);
    }
  }
}

/**
 * What the session did during a wait: whether it was connected at any moment (for the
 * timeout's cause), and how many times the connection went (for the trusted hand-off).
 */
class ConnectionWitness {
  sawConnection = false;
  /** Connections lost so far: `suspended`, `expired` or a new session's `connecting`. */
  disconnections = 0;
  private readonly subscription: { unsubscribe(): void };

  constructor(client: ZkClient) {
    this.subscription = client.session$.subscribe(({ state }) => {
      if (isConnectedState(state)) this.sawConnection = true;
      else if (state === 'suspended' || state === 'expired' || state === 'connecting')
        this.disconnections += 1;
    });
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}

/**
 * Removes every child of `path` whose name starts with `prefix`: the node a create may have
 * made when its outcome was unknown (Curator's protected clean-up). The prefix holds a UUID
 * made for that one create, so only that create can have made such a node. Retried across
 * disconnections while the session that sent the create lives (the node, if any, is an
 * ephemeral of that session: it blocks the queue until removed or the session ends).
 */
export function removeOrphan(
  client: ZkClient,
  path: string,
  prefix: string,
  sessionId: string | undefined,
): Promise<void> {
  const work = (async () => {
    let owner = sessionId;
    for (;;) {
      if (client.isClosed) return;
      try {
        await client.connected();
      } catch {
        if (client.isClosed) return;
        continue;
      }
      // A create sent before the first session existed went out on the first session.
      owner ??= client.sessionId;
      if (client.sessionId !== owner) return;
      try {
        const children = await client.promises.children(path);
        for (const name of children) {
          if (name.startsWith(prefix)) await deleteQuietly(client, joinPath(path, name));
        }
        return;
      } catch (error) {
        if (!isZkError(error) || !error.isRetryable) return;
      }
    }
  })();
  client.track(work);
  return work;
}

/**
 * Removes a node of ours for as long as the session that owns it lives: retried across
 * disconnections (an orphan of a live session would block the queue), done once the node, the
 * session or the client is gone. The delete is sent at once when connected, so whatever this
 * client sends next reaches the server after it. Tracked, so `client.close()` waits for it.
 */
export function removeOwnNode(client: ZkClient, node: string, sessionId: string): Promise<void> {
  const work = (async () => {
    for (;;) {
      try {
        await deleteQuietly(client, node);
        return;
      } catch (error) {
        if (!isZkError(error) || !error.isRetryable) return;
      }
      if (client.isClosed || client.sessionId !== sessionId) return;
      await client.connected().catch(ignore);
      if (client.isClosed || client.sessionId !== sessionId) return;
    }
  })();
  client.track(work);
  return work;
}

/**
 * Removes the lock path `path` if it is still the container this acquisition made (its data is
 * `mark`, a UUID made for that one create) and no node ever went into it: the acquisition gave up
 * before its node went in. ZooKeeper's reaper removes only containers whose child count once
 * moved (`cversion` > 0), so such a container would stay for good — one znode per path given up
 * on that way. The mark also recognises a path whose create's reply was lost.
 *
 * Safe because it does only what the reaper does at any moment: it deletes an empty container,
 * and every recipe already copes with its lock path vanishing (a create that meets NoNode makes
 * the path again; `container-reaped.integration.test.ts`). The mark names the very znode we
 * made (a path made again by anyone else carries other data), `cversion` 0 says no node was ever
 * in it, and the delete fails with NotEmpty if a node went in since the read (one that came and
 * went since leaves an empty container: the reaper's to delete too, so deleting it is as safe).
 * Retried across disconnections until done or the client closes; tracked, so `close()` waits.
 */
export function removeUnusedContainer(client: ZkClient, path: string, mark: string): Promise<void> {
  const work = (async () => {
    for (;;) {
      if (client.isClosed) return;
      try {
        await client.connected();
        const found = await client.promises.get(path);
        const { stat } = found;
        if (found.data.toString('utf8') !== mark || stat.cversion > 0 || stat.numChildren > 0)
          return;
        await client.promises.delete(path, stat.version);
        return;
      } catch (error) {
        if (client.isClosed || !isZkError(error) || !error.isRetryable) return;
      }
    }
  })();
  client.track(work);
  return work;
}

/** Deletes a node; a node already gone (or a closed client, whose session took it) is fine. */
export async function deleteQuietly(client: ZkClient, node: string): Promise<void> {
  try {
    await client.promises.delete(node);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode, ZkErrorCode.ClientClosed, ZkErrorCode.SessionExpired))
      return;
    throw error;
  }
}

/** A create given up on while in flight: remove whatever it made, whenever it answers. */
function abandonCreate(
  client: ZkClient,
  created: Promise<Created>,
  path: string,
  prefix: string,
  sessionId: string | undefined,
): void {
  client.track(
    created.then(
      (node) => removeOwnNode(client, node.path, node.stat.ephemeralOwner),
      () => removeOrphan(client, path, prefix, sessionId),
    ),
  );
}

/**
 * The listing we had, minus the awaited node that went: what the trusted hand-off decides on.
 *
 * One kind of node may have come in front of ours since that listing: a downgrade read node,
 * which a write holder makes while it holds, named with its write node's key so it sorts with
 * it (and not sequential). Any writer before ours was in our listing (it was created before our
 * node, and it existed when its read node was made); if it is still in `rest`, we are not first
 * anyway. So a possible downgrade node is the awaited writer's: it stands in `rest` in the
 * writer's place, as a reader (it lets readers in, not writers or mutex holders).
 */
function withoutAwaited(children: readonly LockChild[], awaited: LockChild): LockChild[] {
  return children.flatMap((child) => {
    if (child.name !== awaited.name) return [child];
    if (awaited.kind !== 'write') return [];
    return [{ ...awaited, name: `(a downgrade of ${awaited.name})`, kind: 'read' as const }];
  });
}

/** One node's life in the queue: created, waiting, then holding or removed. */
class QueueAttempt {
  private readonly client: ZkClient;
  private node: Created | undefined;
  private nodeWatch: { unsubscribe(): void } | undefined;
  /** `witness.disconnections` when the server first showed our node, once it has. */
  private nodeSeenAt: number | undefined;
  private nodeGone = false;
  private onNodeGone: (() => void) | undefined;

  constructor(
    private readonly options: JoinOptions,
    private readonly started: number,
    private readonly deadline: number,
    private readonly witness: ConnectionWitness,
    /** Where `makePath` leaves the mark of each lock path it made, or may have made. */
    private readonly pathsMade: string[],
  ) {
    this.client = options.client;
  }

  async run(): Promise<QueueHold | null | typeof RESTART> {
    let first: LockChild[] | undefined | typeof RESTART;
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
    let children: LockChild[] | undefined = first;
    let fresh = true;
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
        if (children.some((child) => SEMAPHORE_CHILDREN.includes(child.name))) {
          const asked = recipeOfKind(parseChild(nameOf(node.path)).kind);
          throw new LockConflictError(this.options.path, asked, 'semaphore');
        }
        if (!queued) {
          queued = true;
          this.queued(node.path);
        }
        // Safe whatever the rule: `children` contains our node (see the module header).
        const decision = this.options.decide(children, ourIndex);
        if (decision.holds) return this.hold(node);
        if (!this.options.wait) {
          this.giveUp();
          return null;
        }
        const waitFor = decision.waitFor;
        const outcome =
          waitFor === 'children'
            ? await this.waitForChildrenChange(children)
            : await this.waitForDeletion(joinPath(this.options.path, waitFor.name));
        if (Array.isArray(outcome)) {
          children = outcome;
          fresh = false;
          continue;
        }
        if (outcome === 'deleted-trusted' && waitFor !== 'children') {
          // The hand-off: the old listing minus the node that went, if that lets us in.
          const rest = withoutAwaited(children, waitFor);
          const index = rest.findIndex((child) => child.name === ourName);
          if (this.options.decide(rest, index).holds) return this.hold(node);
        }
        // Otherwise list again: others before us may have gone meanwhile, and a hold needs a
        // listing that contains our node.
        if (outcome === 'deleted' || outcome === 'deleted-trusted') {
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
        if (outcome === 'timeout') throw this.timeoutError();
        if (outcome === 'aborted') throw abortReason(this.options.signal as AbortSignal);
        throw outcome.error;
      }
    } catch (error) {
      this.giveUp();
      throw error;
    }
  }

  /** Creates our node with the listing pipelined behind it. Sorted children, or undefined to list. */
  private async createNode(): Promise<LockChild[] | undefined | typeof RESTART> {
    const { client, path, marker, data } = this.options;
    const sequential = this.options.sequential ?? true;
    for (;;) {
      this.checkAbortAndDeadline();
      const { prefix, name } = protectedName(marker);
      const session = client.sessionId;
      const created = client.promises.create(joinPath(path, name), data, {
        mode: 'ephemeral',
        sequential,
      });
      // ZooKeeper answers one session's requests in order: sent right behind the create, the
      // listing is made after our node exists (and if the create failed, it is not used).
      const listed = client.promises.children(path).then(sortChildren, () => undefined);
      try {
        this.node = await this.bounded(created, () =>
          abandonCreate(client, created, path, prefix, session),
        );
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) {
          // The parent (a container) is missing: make it and try again.
          await this.makePath();
          continue;
        }
        if (isZkError(error, ...lostConnection)) {
          // The create may have happened: find our node by its protected prefix.
          const found = await this.recover(prefix, session);
          if (found === RESTART) continue;
          return found;
        }
        if (isZkError(error, ZkErrorCode.SessionExpired)) {
          // Between two sessions: wait for the new one rather than spin.
          await this.untilConnected();
          continue;
        }
        throw error;
      }
      this.watchNode(this.node);
      return this.bounded(listed);
    }
  }

  /** Our hold, handing our node's watch over to whoever keeps it. */
  private hold(node: Created): QueueHold {
    const nodeWatch = this.nodeWatch;
    this.nodeWatch = undefined;
    this.onNodeGone = undefined;
    return {
      node: node.path,
      name: nameOf(node.path),
      stat: node.stat,
      sessionId: node.stat.ephemeralOwner,
      nodeWatch,
    };
  }

  /**
   * Watches our node from its creation on: its deletion ends any wait (start over), and the
   * moment the server first shows it present is what the trusted hand-off needs.
   */
  private watchNode(node: Created): void {
    if (!this.options.watchOwnNode) return;
    this.nodeWatch = this.client.watchData(node.path).subscribe({
      next: (value) => {
        if (value !== null && value.stat.ephemeralOwner === node.stat.ephemeralOwner) {
          this.nodeSeenAt ??= this.witness.disconnections;
          return;
        }
        this.nodeGone = true;
        this.onNodeGone?.();
      },
      error: ignore,
    });
  }

  private stopWatchingNode(): void {
    this.nodeWatch?.unsubscribe();
    this.nodeWatch = undefined;
    this.onNodeGone = undefined;
  }

  /**
   * Whether the node we waited for, told deleted just now, may hand the lock over without a new
   * listing: the old listing minus that node then decides. Saves a round trip per hand-off.
   *
   * Safe because of ZooKeeper's ordering on one connection: replies and watch events reach the
   * client in the order the server applied the changes. The server showed our node present (a
   * reply to our watch, received before this news, on the connection still in use, none lost
   * since), and our node's deletion would have been told to us by that watch. So had our node
   * gone before the awaited one, we would have heard it first (and `nodeGone` ends the wait): at
   * the awaited node's deletion our node existed, in the same parent; no node created since our
   * listing sorts before it but a downgrade node, which `withoutAwaited` accounts for. After a
   * reconnection the watches are set again and their events may come in any order: no trust
   * then, we list.
   *
   * Only with our node watched (`watchOwnNode`): unwatched, nothing tells us that our node was
   * not deleted before the awaited one (by an operator: the attack in
   * `shortcuts.integration.test.ts`), and a listing decides. The watch costs two packets (its
   * read, its notification when our node goes) and the listing it saves one, so the queue sets it
   * only for a caller that wants it anyway (a lease whose end is listened to from the start).
   */
  private mayTrust(): boolean {
    return (
      !this.nodeGone &&
      this.nodeSeenAt !== undefined &&
      this.nodeSeenAt === this.witness.disconnections
    );
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
      await this.bounded(
        client.promises.create(path, mark, { mode: 'container', parents: 'container' }),
      );
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
      await this.untilConnected();
      const children = await this.bounded(client.promises.children(path));
      const ours = children.find((name) => name.startsWith(prefix));
      if (!ours) return RESTART;
      const node = joinPath(path, ours);
      const stat = await this.bounded(client.promises.exists(node));
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

  /**
   * `work`, unless the deadline passes or the signal aborts first: then `onAbandon` takes care
   * of what `work` leaves behind, and this rejects at once with LockTimeoutError or the
   * signal's reason (a disconnected client may hold a request, and retry it, for long).
   */
  private bounded<T>(work: Promise<T>, onAbandon: () => void = ignore): Promise<T> {
    const signal = this.options.signal;
    const remaining = this.deadline - performance.now();
    if (!signal && !Number.isFinite(remaining)) return work;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let cancelTimer = ignore;
      const settle = () => {
        settled = true;
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (reason: unknown) => {
        if (settled) return;
        settle();
        onAbandon();
        reject(reason);
      };
      const onAbort = () => giveUp(abortReason(signal as AbortSignal));
      // Handled first, whatever happens next: abandoned work may still reject (client closed).
      work.then(
        (value) => {
          if (settled) return;
          settle();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settle();
          reject(error);
        },
      );
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(remaining) && !settled) {
        cancelTimer = atDeadline(this.deadline, () => giveUp(this.timeoutError()));
      }
    });
  }

  private queued(node: string): void {
    try {
      this.options.onQueued?.(node);
    } catch {
      // A throwing callback must not break the queue.
    }
  }

  /** Waits for a connection; without a deadline, for the client's `connectTimeoutMs` at most. */
  private async untilConnected(): Promise<void> {
    this.checkAbortAndDeadline();
    const remaining = this.deadline - performance.now();
    const connected = this.client.connected(Number.isFinite(remaining) ? remaining : undefined);
    try {
      await this.bounded(connected, () => connected.catch(ignore));
    } catch (error) {
      if (isZkError(error, ZkErrorCode.ConnectTimeout) && Number.isFinite(remaining)) {
        throw this.timeoutError();
      }
      throw error;
    }
  }

  /** A fresh listing of the queue, sorted; RESTART when the path (so our node) is gone. */
  private async list(): Promise<LockChild[] | typeof RESTART> {
    try {
      return sortChildren(await this.bounded(this.client.promises.children(this.options.path)));
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      throw error;
    }
  }

  private timeoutError(): LockTimeoutError {
    const waited = performance.now() - this.started;
    if (this.witness.sawConnection && isConnectedState(this.client.state)) {
      return new LockTimeoutError(this.options.path, waited);
    }
    const cause = this.witness.sawConnection
      ? new ZkError(
          ZkErrorCode.ConnectionLoss,
          `the connection to ZooKeeper was lost while waiting for ${this.options.path}`,
        )
      : new ZkError(
          ZkErrorCode.ConnectTimeout,
          `no connection to ZooKeeper at any moment of the wait for ${this.options.path}`,
        );
    return new LockTimeoutError(this.options.path, waited, { cause });
  }

  private checkAbortAndDeadline(): void {
    const signal = this.options.signal;
    if (signal?.aborted) throw abortReason(signal);
    if (performance.now() >= this.deadline) throw this.timeoutError();
  }

  /** Gives up our node: its removal is sent now and finished in the background. */
  private giveUp(): void {
    this.stopWatchingNode();
    const node = this.node;
    this.node = undefined;
    if (node) void removeOwnNode(this.client, node.path, node.stat.ephemeralOwner);
  }

  /** Waits until `node` is gone, bounded by the deadline, the signal and our session's life. */
  private waitForDeletion(node: string): Promise<WaitOutcome> {
    return this.waitUntil<WaitOutcome>((finish) =>
      // Unsubscribing as soon as the node is gone leaves no watch armed on the server.
      this.client.watchData(node).subscribe({
        next: (value) => {
          // Decided now, in the order the client heard things (see `mayTrust`).
          if (value === null) finish(this.mayTrust() ? 'deleted-trusted' : 'deleted');
        },
        error: (error: unknown) => finish({ error }),
      }),
    );
  }

  /** Waits until the children differ from `current`: resolves the new sorted children. */
  private waitForChildrenChange(current: readonly LockChild[]): Promise<WaitOutcome | LockChild[]> {
    const known = current.map((child) => child.name).sort();
    return this.waitUntil<WaitOutcome | LockChild[]>((finish) =>
      this.client.watchChildren(this.options.path).subscribe({
        next: (names) => {
          if (names.length !== known.length || names.some((name, index) => name !== known[index])) {
            finish(sortChildren(names));
          }
        },
        error: (error: unknown) => finish({ error }),
      }),
    );
  }

  /** Runs a watch until it finishes the wait, bounded by the deadline, the signal and our session. */
  private waitUntil<T>(
    watch: (finish: (outcome: T | WaitOutcome) => void) => { unsubscribe(): void },
  ): Promise<T | WaitOutcome> {
    const { client, signal } = this.options;
    const owner = this.node?.stat.ephemeralOwner;
    return new Promise<T | WaitOutcome>((resolve) => {
      let settled = false;
      let cancelTimer = ignore;
      const subscriptions: { unsubscribe(): void }[] = [];
      const finish = (outcome: T | WaitOutcome) => {
        if (settled) return;
        settled = true;
        cancelTimer();
        this.onNodeGone = undefined;
        signal?.removeEventListener('abort', onAbort);
        for (const subscription of subscriptions) subscription.unsubscribe();
        resolve(outcome);
      };
      const onAbort = () => finish('aborted');
      if (signal) {
        if (signal.aborted) return finish('aborted');
        signal.addEventListener('abort', onAbort, { once: true });
      }
      const remaining = this.deadline - performance.now();
      if (remaining <= 0) return finish('timeout');
      if (Number.isFinite(remaining)) {
        cancelTimer = atDeadline(this.deadline, () => finish('timeout'));
      }
      if (this.nodeGone) return finish('own-deleted');
      this.onNodeGone = () => finish('own-deleted');
      subscriptions.push(
        client.session$.subscribe({
          next: ({ state, sessionId }) => {
            if (state === 'closed' || state === 'auth-failed') finish('closed');
            else if (state === 'expired') finish('session-lost');
            else if ((state === 'connecting' || state === 'connected') && sessionId !== owner) {
              finish('session-lost');
            }
          },
          complete: () => finish('closed'),
        }),
      );
      if (settled) return;
      subscriptions.push(watch(finish));
      if (settled) for (const subscription of subscriptions) subscription.unsubscribe();
    });
  }
}
