/**
 * A queue node's waits: until the node before it goes, or the children change — each bounded by
 * the acquisition's deadline, the life of the session that owns our node, and our node's own
 * (watched from its creation when asked: its deletion ends a wait, and the moment the server
 * first showed it is what the trusted hand-off stands on).
 */
import type { Created, ZkClient } from '@zkrx/core';
import { onAbort } from '@zkrx/core';
import type { Deadline } from './deadline';
import type { LocalNode } from './local-hand-off';
import { type LockChild, sortChildren } from './lock-children';
import type { Session } from './session';

const ignore = () => {};

/** How a wait ended. */
export type WaitOutcome =
  | 'deleted'
  /** Deleted, and told while the hand-off may be trusted (see `OwnNodeWatch.mayTrust`). */
  | 'deleted-trusted'
  /** Removed by this client, handing the lock over to us (see `local-hand-off.ts`). */
  | 'handed'
  /** Our own node is gone. */
  | 'own-deleted'
  | 'session-lost'
  /** Given up: the deadline passed, or the caller aborted (`Deadline.reason` says which). */
  | 'aborted'
  | 'closed'
  | { error: unknown };

/** What bounds a wait of one queue node. */
export interface WaitBounds {
  readonly client: ZkClient;
  readonly deadline: Deadline;
  /** The session that owns our node (`wait`: a suspension does not end it). */
  readonly session: Session;
  /** Our node, watched from its creation (`JoinOptions.watchOwnNode`), if it is. */
  readonly ownNode: OwnNodeWatch | undefined;
}

/** Waits until `node` is gone. */
export function waitForDeletion(bounds: WaitBounds, node: string): Promise<WaitOutcome> {
  return waitUntil<WaitOutcome>(bounds, (finish) =>
    // Unsubscribing as soon as the node is gone leaves no watch armed on the server.
    bounds.client.watchData(node).subscribe({
      next: (value) => {
        // Decided now, in the order the client heard things (see `OwnNodeWatch.mayTrust`).
        if (value === null) finish(bounds.ownNode?.mayTrust() ? 'deleted-trusted' : 'deleted');
      },
      error: (error: unknown) => finish({ error }),
    }),
  );
}

/**
 * Waits until this client removes `node`, a node of its own right before ours (`ours`): no
 * ZooKeeper watch, no notification (see `local-hand-off.ts`). `handed` when its removal handed
 * the lock over to us, `deleted` when it is only known gone.
 */
export function waitForLocalRemoval(
  bounds: WaitBounds,
  node: LocalNode,
  ours: string,
): Promise<WaitOutcome> {
  return waitUntil<WaitOutcome>(bounds, (finish) =>
    node.await(ours, (end) => finish(end === 'handed' ? 'handed' : 'deleted')),
  );
}

/** Waits until the children of `path` differ from `current`: resolves the new sorted children. */
export function waitForChildrenChange(
  bounds: WaitBounds,
  path: string,
  current: readonly LockChild[],
): Promise<WaitOutcome | LockChild[]> {
  const known = current.map((child) => child.name).sort();
  return waitUntil<WaitOutcome | LockChild[]>(bounds, (finish) =>
    bounds.client.watchChildren(path).subscribe({
      next: (names) => {
        if (names.length !== known.length || names.some((name, index) => name !== known[index])) {
          finish(sortChildren(names));
        }
      },
      error: (error: unknown) => finish({ error }),
    }),
  );
}

/** Runs a watch until it finishes the wait, bounded by the acquisition's signal and our session. */
function waitUntil<T>(
  bounds: WaitBounds,
  watch: (finish: (outcome: T | WaitOutcome) => void) => { unsubscribe(): void },
): Promise<T | WaitOutcome> {
  const { deadline, session, ownNode } = bounds;
  return new Promise<T | WaitOutcome>((resolve) => {
    const signal = deadline.signal;
    let settled = false;
    let stopListening: (() => void) | undefined;
    const subscriptions: { unsubscribe(): void }[] = [];
    const finish = (outcome: T | WaitOutcome) => {
      if (settled) return;
      settled = true;
      stopListening?.();
      ownNode?.unlisten();
      for (const subscription of subscriptions) subscription.unsubscribe();
      resolve(outcome);
    };
    if (deadline.over) return finish('aborted');
    if (signal) stopListening = onAbort(signal, () => finish('aborted'));
    if (ownNode?.gone) return finish('own-deleted');
    ownNode?.listen(() => finish('own-deleted'));
    subscriptions.push(
      session.status$.subscribe({
        complete: () => finish(session.ended === 'closed' ? 'closed' : 'session-lost'),
      }),
    );
    if (settled) return;
    subscriptions.push(watch(finish));
    if (settled) for (const subscription of subscriptions) subscription.unsubscribe();
  });
}

/** The watch on our own queue node (`JoinOptions.watchOwnNode`). */
export class OwnNodeWatch {
  /** Our node is gone (deleted, or no longer our session's). */
  gone = false;
  /** `session.suspensions` when the server first showed our node, once it has. */
  private seenAt: number | undefined;
  private onGone: (() => void) | undefined;
  private subscription: { unsubscribe(): void } | undefined;

  /**
   * @param session The session that owns our node: its `suspensions` say whether the connection
   *   that showed our node is still the one in use.
   */
  constructor(
    client: ZkClient,
    node: Created,
    private readonly session: Session,
  ) {
    this.subscription = client.watchData(node.path).subscribe({
      next: (value) => {
        if (value !== null && value.stat.ephemeralOwner === node.stat.ephemeralOwner) {
          this.seenAt ??= this.session.suspensions;
          return;
        }
        this.gone = true;
        this.onGone?.();
      },
      error: ignore,
    });
  }

  /** Calls `listener` once our node is gone (not at once: check `gone` first). */
  listen(listener: () => void): void {
    this.onGone = listener;
  }

  /** Stops calling the listener given to `listen`. */
  unlisten(): void {
    this.onGone = undefined;
  }

  /**
   * Whether the node we waited for, told deleted just now, may hand the lock over without a new
   * listing: the old listing minus that node then decides. Saves a round trip per hand-off.
   *
   * Safe because of ZooKeeper's ordering on one connection: replies and watch events reach the
   * client in the order the server applied the changes. The server showed our node present (a
   * reply to our watch, received before this news, on the connection still in use, none lost
   * since), and our node's deletion would have been told to us by that watch. So had our node
   * gone before the awaited one, we would have heard it first (and `gone` ends the wait): at
   * the awaited node's deletion our node existed, in the same parent; no node created since our
   * listing sorts before it but a downgrade node, which `withoutAwaited` accounts for. After a
   * reconnection the watches are set again and their events may come in any order: no trust
   * then, we list.
   *
   * Only with our node watched (`watchOwnNode`): unwatched, nothing tells us that our node was
   * not deleted before the awaited one (by an operator: the attack in
   * `shortcuts.integration.test.ts`), and a listing decides. The watch costs two packets (its
   * read, its notification when our node goes) and the listing it saves one, so the queue sets it
   * only for a caller that wants it anyway (a revocable lease).
   */
  mayTrust(): boolean {
    return (
      !this.gone &&
      this.session.ended === undefined &&
      this.seenAt !== undefined &&
      this.seenAt === this.session.suspensions
    );
  }

  /**
   * Hands the watch over to whoever keeps the hold (`HeldNode.nodeWatch`): they subscribe to
   * the same watch before unsubscribing this one, so the client keeps its one ZooKeeper watch.
   */
  handOver(): { unsubscribe(): void } | undefined {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.onGone = undefined;
    return subscription;
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.onGone = undefined;
  }
}
