/**
 * The queue every lock recipe stands in: a protected EPHEMERAL_SEQUENTIAL node, a listing
 * pipelined behind its create, and a herd-free wait on the one node that must go first.
 */
import {
  type Created,
  isZkError,
  joinPath,
  type Stat,
  type ZkClient,
  type ZkData,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { LockTimeoutError } from './errors';
import { type LockChild, parseChild, protectedName, sequenceOf, sortChildren } from './node-names';

/** What a recipe concludes from the sorted children and its own position among them. */
export type QueueDecision =
  | { readonly holds: true }
  /** Wait for any change of the children (a count-based rule, as Curator's semaphore). */
  | { readonly holds: false; readonly waitFor: 'children' }
  | {
      readonly holds: false;
      /** The one node whose deletion may let us in. */
      readonly waitFor: LockChild;
      /**
       * List the children again after it goes (true), or trust the listing we have minus that
       * node (false). Trusting it saves a round trip per hand-off and is right whenever no node
       * that sorts before ours can appear after our listing (sequential names only).
       */
      readonly relist: boolean;
    };

/** The recipe's rule: do we hold, and if not, what do we wait for. */
export type Decide = (children: readonly LockChild[], ourIndex: number) => QueueDecision;

export interface JoinOptions {
  readonly client: ZkClient;
  /** The lock path (already validated): parent of the queue's nodes. */
  readonly path: string;
  /** The recipe's marker in the node name (`lock-`, `__READ__`, ...). */
  readonly marker: string;
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
  /** Called with our node's path each time it joins the queue (before any wait). */
  readonly onQueued?: (node: string) => void;
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
  /** True when ours was the only node at the path when we took it. */
  readonly alone?: boolean;
}

// ---- quiet paths: the uncontended lock without its listing ----

/**
 * What a client knows of a lock path it was alone on: the sequence of the node it held there,
 * for the session that held it. ZooKeeper 3.8 numbers sequential children with a counter that
 * every child create bumps (deletes do not: `0000000000`, `0000000001`... for create, delete,
 * create, delete). So when our next node's sequence is exactly the next one, nobody created a
 * child in between, and since we were alone and removed our node, the path holds ours only: we
 * hold, and the listing can be skipped. Were a version to count deletes too, the numbers would
 * never match and every acquisition would simply list, as usual.
 */
interface QuietPath {
  readonly sequence: number;
  readonly sessionId: string;
}

const quietPaths = new WeakMap<ZkClient, Map<string, QuietPath>>();
const QUIET_PATHS_PER_CLIENT = 1_000;

/** Records that this client held `path` alone with node `name` and has removed that node. */
export function rememberQuietPath(
  client: ZkClient,
  path: string,
  name: string,
  sessionId: string,
): void {
  const sequence = sequenceOf(name);
  if (sequence === undefined) return;
  let paths = quietPaths.get(client);
  if (!paths) {
    paths = new Map();
    quietPaths.set(client, paths);
  }
  paths.delete(path);
  if (paths.size >= QUIET_PATHS_PER_CLIENT) paths.delete(paths.keys().next().value as string);
  paths.set(path, { sequence, sessionId });
}

/** Takes (and forgets) what the client knew of `path`, if it is for the current session. */
function takeQuietPath(client: ZkClient, path: string): QuietPath | undefined {
  const paths = quietPaths.get(client);
  const quiet = paths?.get(path);
  if (!quiet) return undefined;
  paths?.delete(path);
  return quiet.sessionId === client.sessionId ? quiet : undefined;
}

/** The sequence after `sequence` on ZooKeeper's signed 32-bit counter. */
function nextSequence(sequence: number): number {
  return ((sequence + 1 + 2 ** 31) % 2 ** 32) - 2 ** 31;
}

const RESTART = Symbol('restart');
type WaitOutcome =
  | 'deleted'
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

/**
 * Joins the queue at `path` and resolves once the recipe's rule says we hold; resolves null
 * when `wait` is false and we do not hold at once. On every other exit (timeout, abort, error)
 * our node is removed before the promise settles.
 */
export async function joinQueue(options: JoinOptions): Promise<QueueHold | null> {
  const started = performance.now();
  const deadline =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : started + options.timeoutMs;
  if (options.signal?.aborted) throw abortReason(options.signal);
  for (;;) {
    const outcome = await new QueueAttempt(options, started, deadline).run();
    if (outcome !== RESTART) return outcome;
    if (options.onSessionLoss === 'fail') {
      throw new ZkError(
        ZkErrorCode.SessionExpired,
        `lock ${options.path}: the session ended while waiting`,
        {
          path: options.path,
        },
      );
    }
  }
}

/**
 * Removes every child of `path` whose name starts with `prefix` once the client can reach the
 * server: the orphan a create leaves when its outcome was unknown (Curator's protected cleanup).
 */
export function removeByPrefix(client: ZkClient, path: string, prefix: string): Promise<void> {
  const work = (async () => {
    for (let tries = 0; tries < 5 && !client.isClosed; tries++) {
      try {
        await client.connected();
        const children = await client.promises.children(path);
        for (const name of children) {
          if (name.startsWith(prefix)) await deleteQuietly(client, joinPath(path, name));
        }
        return;
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode, ZkErrorCode.ClientClosed)) return;
      }
    }
  })();
  client.track(work);
  return work;
}

/**
 * Removes a node of ours for as long as the session that owns it lives: retried across
 * disconnections (an orphan of a live session would block the queue), done once the node, the
 * session or the client is gone. Tracked, so `client.close()` waits for it while connected.
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
      await client.connected().catch(() => {});
      if (client.isClosed || client.sessionId !== sessionId) return;
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

/** One node's life in the queue: created, waiting, then holding or removed. */
class QueueAttempt {
  private readonly client: ZkClient;
  private node: Created | undefined;
  private ownerSession: string | undefined;

  constructor(
    private readonly options: JoinOptions,
    private readonly started: number,
    private readonly deadline: number,
  ) {
    this.client = options.client;
  }

  async run(): Promise<QueueHold | null | typeof RESTART> {
    const first = await this.createNode();
    if (first === RESTART) return RESTART;
    let children = first;
    const node = this.node as Created;
    const ourName = node.path.slice(node.path.lastIndexOf('/') + 1);
    try {
      for (;;) {
        if (children === undefined) {
          const listed = await this.unlessAborted(this.list(), () => {});
          if (listed === RESTART) return RESTART;
          children = sortChildren(listed);
        }
        const ourIndex = children.findIndex((child) => child.name === ourName);
        // Our node is missing from a listing made after its create: it is gone (deleted, or
        // our session ended). Start over with a new node.
        if (ourIndex < 0) return RESTART;
        const decision = this.options.decide(children, ourIndex);
        if (decision.holds) {
          return {
            node: node.path,
            name: ourName,
            stat: node.stat,
            sessionId: this.ownerSession as string,
            alone: children.length === 1,
          };
        }
        if (!this.options.wait) {
          await this.removeNode();
          return null;
        }
        const waitFor = decision.waitFor;
        const outcome =
          waitFor === 'children'
            ? await this.waitForChildrenChange(children)
            : await this.waitForDeletion(joinPath(this.options.path, waitFor.name));
        if (Array.isArray(outcome)) {
          children = outcome;
          continue;
        }
        if (outcome === 'deleted' && waitFor !== 'children') {
          children = decision.relist
            ? undefined
            : children.filter((child) => child.name !== waitFor.name);
          continue;
        }
        if (outcome === 'session-lost') return RESTART;
        if (outcome === 'closed')
          throw new ZkError(
            ZkErrorCode.ClientClosed,
            `lock ${this.options.path}: the client is closed`,
          );
        await this.removeNode();
        if (outcome === 'timeout')
          throw new LockTimeoutError(this.options.path, performance.now() - this.started);
        if (outcome === 'aborted') throw abortReason(this.options.signal as AbortSignal);
        throw typeof outcome === 'object'
          ? outcome.error
          : new ZkError(ZkErrorCode.SystemError, 'unexpected wait outcome');
      }
    } catch (error) {
      await this.removeNode().catch(() => {});
      throw error;
    }
  }

  /** Creates our node with the listing pipelined behind it. Sorted children, or undefined to list. */
  private async createNode(): Promise<LockChild[] | undefined | typeof RESTART> {
    const { client, path, marker, data } = this.options;
    for (;;) {
      this.checkAbortAndDeadline();
      const { prefix, name } = protectedName(marker);
      // Alone here last time? Then the create alone may tell us we still are (no listing).
      const quiet = takeQuietPath(client, path);
      // ZooKeeper answers one session's requests in order: the listing sees our new node.
      const created = client.promises.create(joinPath(path, name), data, {
        mode: 'ephemeral',
        sequential: true,
      });
      const listed = quiet ? undefined : client.promises.children(path);
      listed?.catch(() => {});
      try {
        this.node = await this.unlessAborted(created, () => {
          // Given up while the create was in flight: leave no node behind, whatever became of it.
          created.then(
            (node) => removeOwnNode(client, node.path, node.stat.ephemeralOwner),
            () => removeByPrefix(client, path, prefix),
          );
        });
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) {
          // The parent (a container) is missing: create it and try again.
          await this.unlessAborted(client.promises.mkdirp(path, { mode: 'container' }), () => {});
          continue;
        }
        if (isZkError(error, ...lostConnection)) {
          // The create may have happened: find our node by its protected prefix.
          const found = await this.recover(prefix);
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
      this.ownerSession = this.node.stat.ephemeralOwner;
      this.queued(this.node.path);
      if (quiet) {
        const ours = parseChild(this.node.path.slice(this.node.path.lastIndexOf('/') + 1));
        const sequence = sequenceOf(ours.name);
        const untouched = sequence !== undefined && sequence === nextSequence(quiet.sequence);
        return untouched && this.ownerSession === quiet.sessionId ? [ours] : undefined;
      }
      try {
        return sortChildren(await (listed as Promise<string[]>));
      } catch {
        return undefined;
      }
    }
  }

  /** After a create with an unknown outcome: adopt our node if our session made it. */
  private async recover(prefix: string): Promise<LockChild[] | typeof RESTART> {
    const { client, path } = this.options;
    try {
      await this.untilConnected();
      const children = await client.promises.children(path);
      const ours = children.find((name) => name.startsWith(prefix));
      if (!ours) return RESTART;
      const node = joinPath(path, ours);
      const stat = await client.promises.exists(node);
      if (!stat) return RESTART;
      if (stat.ephemeralOwner !== client.sessionId) {
        // Made by a session that is gone or going: not ours to hold.
        await deleteQuietly(client, node);
        return RESTART;
      }
      this.node = { path: node, stat };
      this.ownerSession = stat.ephemeralOwner;
      this.queued(node);
      return sortChildren(children);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      // Gave up (timeout, abort, closed): leave no orphan behind.
      void removeByPrefix(client, path, prefix);
      throw error;
    }
  }

  /**
   * `work`, unless the signal aborts first: then `onAbandon` takes care of what `work` leaves
   * behind, and this rejects with the signal's reason at once (a disconnected client may hold a
   * request for long).
   */
  private unlessAborted<T>(work: Promise<T>, onAbandon: () => void): Promise<T> {
    const signal = this.options.signal;
    if (!signal) return work;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        onAbandon();
        reject(abortReason(signal));
      };
      // Handled first, whatever happens next: abandoned work may still reject (client closed).
      work.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private queued(node: string): void {
    try {
      this.options.onQueued?.(node);
    } catch {
      // A throwing callback must not break the queue.
    }
  }

  private async untilConnected(): Promise<void> {
    const remaining = this.deadline - performance.now();
    if (remaining <= 0)
      throw new LockTimeoutError(this.options.path, performance.now() - this.started);
    try {
      // Aborting must not wait for the connection to come back.
      const connected = this.options.client.connected(
        Number.isFinite(remaining) ? remaining : undefined,
      );
      await this.unlessAborted(connected, () => connected.catch(() => {}));
    } catch (error) {
      if (isZkError(error, ZkErrorCode.ConnectTimeout) && Number.isFinite(remaining)) {
        throw new LockTimeoutError(this.options.path, performance.now() - this.started);
      }
      throw error;
    }
    this.checkAbortAndDeadline();
  }

  private async list(): Promise<string[] | typeof RESTART> {
    try {
      return await this.options.client.promises.children(this.options.path);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return RESTART;
      throw error;
    }
  }

  private checkAbortAndDeadline(): void {
    const signal = this.options.signal;
    if (signal?.aborted) throw abortReason(signal);
    if (performance.now() >= this.deadline) {
      throw new LockTimeoutError(this.options.path, performance.now() - this.started);
    }
  }

  private async removeNode(): Promise<void> {
    const node = this.node;
    this.node = undefined;
    if (!node) return;
    const removal = removeOwnNode(this.options.client, node.path, node.stat.ephemeralOwner);
    // Connected, this takes one round trip; disconnected, it goes on in the background.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      removal,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 2_000);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Waits until `node` is gone, bounded by the deadline, the signal and our session's life. */
  private waitForDeletion(node: string): Promise<WaitOutcome> {
    return this.waitUntil<WaitOutcome>((finish) =>
      // Unsubscribing as soon as the node is gone leaves no watch armed on the server.
      this.options.client.watchData(node).subscribe({
        next: (value) => {
          if (value === null) finish('deleted');
        },
        error: (error: unknown) => finish({ error }),
      }),
    );
  }

  /** Waits until the children differ from `current`: resolves the new sorted children. */
  private waitForChildrenChange(current: readonly LockChild[]): Promise<WaitOutcome | LockChild[]> {
    const known = current.map((child) => child.name).sort();
    return this.waitUntil<WaitOutcome | LockChild[]>((finish) =>
      this.options.client.watchChildren(this.options.path).subscribe({
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
    const owner = this.ownerSession;
    return new Promise<T | WaitOutcome>((resolve) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const subscriptions: { unsubscribe(): void }[] = [];
      const finish = (outcome: T | WaitOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
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
      if (Number.isFinite(remaining)) timer = setTimeout(() => finish('timeout'), remaining);
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
