/**
 * The hold of one lock node, shared by re-entrant leases: watched for loss (its session's end,
 * a suspension under the policy, the node's deletion), with its fencing token, its AbortSignal
 * and the removal of its node; and the async context that makes re-entering possible.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ZkClient } from '@zkrx/core';
import { BehaviorSubject, type Subscription } from 'rxjs';
import { removeOwnNode } from './clean-up';
import { LeaseReleasedError, LockLostError, type LockLostReason, LockRevokedError } from './errors';
import { type LocalNode, localNodes } from './local-hand-off';
import { REVOKE_MESSAGE } from './lock-children';
import type { HeldNode } from './queue';
import { type Session, sessionOf } from './session';
import { type HoldRecord, holdStarted, type LockLabels } from './telemetry';

/**
 * How long a hold goes unwatched before its node's watch is armed for those who listen for its
 * end (see `Hold.listen`): a hold shorter than this costs the server no watch.
 */
export const WATCH_NODE_AFTER_MS = 100;

/** What a lease does while the connection is suspended (ownership uncertain). */
export type SuspendedPolicy = 'release' | 'continue';

/** The life of a lease: `held`, maybe `suspended` (policy `continue`), then `lost` or `released`. */
export type LeaseState = 'held' | 'suspended' | 'lost' | 'released';

export interface HoldOptions {
  readonly client: ZkClient;
  readonly path: string;
  /** What the reentrancy context keys this hold by (the recipe and its side, e.g. `write`). */
  readonly recipe: string;
  readonly onSuspended: SuspendedPolicy;
  /** Act on revocation requests (the node's data set to `__REVOKE__`, Curator's protocol). */
  readonly revocable?: boolean;
  /** The lock's name in telemetry (`LockOptions.name`): then its path is an attribute too. */
  readonly name?: string | undefined;
}

/** What a release that removes nothing resolves: one settled promise serves them all. */
const settled = Promise.resolve();

const ignore = () => {};

/** A release is no failure: its reason needs no stack trace (which costs more than the rest). */
export function releasedReason(path: string): LeaseReleasedError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new LeaseReleasedError(path);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * An AbortSignal made only when someone asks for it (most leases are never asked), aborted with
 * the lease's end reason whenever that comes.
 */
export class LazySignal {
  private controller: AbortController | undefined;
  /** The end reason, or what makes it: made only if the signal is asked for (most never are). */
  private reason: (() => unknown) | undefined;
  private ended = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.reasonNow());
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.abortWith(() => reason);
  }

  /** Ends with the reason `make` gives, called only if someone has or asks for the signal. */
  abortWith(make: () => unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.reason = make;
    this.controller?.abort(this.reasonNow());
  }

  private reasonNow(): unknown {
    const made = (this.reason as () => unknown)();
    this.reason = () => made;
    return made;
  }
}

// ---- re-entrancy by async context ----

type HoldMap = ReadonlyMap<string, Hold>;
const storage = new AsyncLocalStorage<HoldMap>();
const clientIds = new WeakMap<ZkClient, number>();
let nextClientId = 1;

function holdKey(client: ZkClient, recipe: string, path: string): string {
  let id = clientIds.get(client);
  if (id === undefined) {
    id = nextClientId++;
    clientIds.set(client, id);
  }
  return `${id}\u0000${recipe}\u0000${path}`;
}

/** The live hold of this client on `path` (by `recipe`) in the current async context, if any. */
export function heldInContext(client: ZkClient, recipe: string, path: string): Hold | undefined {
  const hold = storage.getStore()?.get(holdKey(client, recipe, path));
  return hold?.isHeld ? hold : undefined;
}

/** Runs `fn` in the current context plus `hold`. */
export function runHolding<T>(hold: Hold, fn: () => T): T {
  const next = new Map(storage.getStore());
  next.set(hold.key, hold);
  return storage.run(next, fn);
}

// ---- the shared hold of one node ----

/**
 * One lock node held: tracks the session for loss and owns the node's removal. Re-entrant
 * leases share it and count down; the node goes when the last one is released.
 */
export class Hold {
  readonly key: string;
  readonly client: ZkClient;
  readonly path: string;
  readonly node: string;
  readonly fencingToken: number;
  readonly sessionId: string;
  /** The session holding the node, as this lease's policy reads it: its end is the hold's. */
  readonly session: Session;
  readonly state$: BehaviorSubject<LeaseState>;
  readonly controller = new LazySignal();
  lostError: LockLostError | undefined;
  /** Set once a revocation was requested (revocable leases only). */
  readonly revoked$ = new BehaviorSubject<LockRevokedError | undefined>(undefined);
  private holders = 0;
  /** Whether revocation requests are heard (`revocable: true`). */
  readonly revocable: boolean;
  private readonly sessionSubscription: Subscription;
  private nodeSubscription: Subscription | undefined;
  /** When the hold began (`performance.now()`): its node's watch is armed once it is old enough. */
  private readonly heldAt = performance.now();
  /** Arms the node's watch once the hold is `WATCH_NODE_AFTER_MS` old (see `listen`). */
  private armTimer: ReturnType<typeof setTimeout> | undefined;
  /** Our node as a local waiter behind it sees it (`local-hand-off.ts`), if it is one of ours. */
  private readonly local: LocalNode | undefined;
  private removal: Promise<void> | undefined;
  /** The lock as telemetry names it (the guard's span uses it too). */
  readonly labels: LockLabels;
  private readonly holdRecord: HoldRecord;

  constructor(options: HoldOptions, held: HeldNode) {
    this.client = options.client;
    this.path = options.path;
    this.labels = { kind: options.recipe, path: options.path, name: options.name };
    // Started before the session is watched: a session already gone ends the hold at once.
    this.holdRecord = holdStarted(this.labels);
    this.key = holdKey(options.client, options.recipe, options.path);
    this.node = held.node;
    this.fencingToken = held.stat.czxid;
    this.sessionId = held.sessionId;
    this.revocable = options.revocable === true;
    this.state$ = new BehaviorSubject<LeaseState>('held');
    // The policy is the session view's: `release` ends it at the first suspension, `continue`
    // before the servers could expire the session (see `SuspensionPolicy`).
    this.session = sessionOf(this.client, {
      id: held.sessionId,
      onSuspended: options.onSuspended,
    }) as Session;
    const session = this.session;
    this.sessionSubscription = session.status$.subscribe({
      next: (status) => {
        if (status === 'suspended') return this.setState('suspended');
        if (status === 'connected' && this.state$.value === 'suspended')
          this.confirmAfterReconnect();
      },
      // The session ended for this hold: closed (the client's close ends every lease, before
      // the session goes), or lost with it.
      complete: () => {
        if (session.ended === 'closed') this.end('released');
        else this.lose(session.ended ?? 'session-expired');
      },
    });
    // The session was already gone when the hold was made: the subscription ended it at once.
    if (!this.isHeld) {
      this.sessionSubscription.unsubscribe();
      held.nodeWatch?.unsubscribe();
      this.local = undefined;
      return;
    }
    // Watched from the start when the queue watched our node (taken over here: subscribed
    // before the queue's subscription goes, the client keeps its one ZooKeeper watch), or when
    // revocation requests are to be heard; otherwise once someone listens (see `listen`).
    if (held.nodeWatch || this.revocable) this.watchNode();
    held.nodeWatch?.unsubscribe();
    // A waiter of this client behind our node waits for our removal, not for a ZooKeeper watch:
    // our node's watch, armed once the hold is old enough, ends the hold, and so that wait, if
    // someone else deletes the node (see `local-hand-off.ts`).
    this.local = localNodes(this.client).get(this.node);
    this.local?.whenWaitedOn(() => this.listen());
  }

  /**
   * Someone listens for the hold's end (`state$`, `lost$`, `signal`, the observable forms), or a
   * local waiter waits behind our node: our node's watch is armed once the hold is
   * `WATCH_NODE_AFTER_MS` old (at once if it is already), so that its deletion by someone else
   * (an operator, a tool) ends the hold.
   *
   * Safe to arm late: the watch's first read shows the node as it is then, so a deletion made
   * before is reported at once (`watchNode`). What a hold younger than that does not get is
   * hearing of such a deletion before it is that old: a holder that listens hears of it at most
   * `WATCH_NODE_AFTER_MS` (and a round trip) after the hold began, or at once after that. Its
   * guarded writes never depended on hearing it (each carries its own check), and a hold that
   * ends sooner never pays for the watch: its two server packets, its read and its notification
   * when the release deletes the node.
   */
  listen(): void {
    if (this.nodeSubscription || this.armTimer || !this.isHeld) return;
    const left = this.heldAt + WATCH_NODE_AFTER_MS - performance.now();
    if (left <= 0) return this.watchNode();
    this.armTimer = setTimeout(() => {
      this.armTimer = undefined;
      this.watchNode();
    }, left);
    this.armTimer.unref?.();
  }

  /**
   * Watches our node, once, from now until the hold ends: its deletion (by an operator, a tool)
   * ends the hold (`node-deleted`), and a revocable lease hears revocation requests (the node's
   * data set to `__REVOKE__`) on the same watch. Armed at once for a revocable lease or when the
   * queue watched the node already; for those who listen for the lease's end, once the hold is
   * old enough (`listen`): the watch costs the server two packets (its read, its notification
   * when the node goes), which only those pay.
   *
   * Armed late, it misses nothing: its first read shows the node as it is now, so a node deleted
   * before is reported at once (`null`: a name holding a UUID is never made again), and a
   * revocation request made before is read in the data.
   */
  watchNode(): void {
    if (this.nodeSubscription || !this.isHeld) return;
    this.nodeSubscription = this.client.watchData(this.node).subscribe({
      next: (value) => {
        if (value === null || value.stat.ephemeralOwner !== this.sessionId) {
          return this.lose('node-deleted');
        }
        if (this.revocable && value.data.toString('utf8') === REVOKE_MESSAGE) this.revoke();
      },
      error: () => {
        // The stream failed (client closed): the session events decide.
      },
    });
    // Lost synchronously (a cached `null`): the subscription was made after `finish` ran.
    if (!this.isHeld) this.nodeSubscription.unsubscribe();
  }

  /** The hold's AbortSignal (see `LazySignal`); asking for it listens (`listen`). */
  get signal(): AbortSignal {
    this.listen();
    return this.controller.signal;
  }

  get isHeld(): boolean {
    const state = this.state$.value;
    return state === 'held' || state === 'suspended';
  }

  /** Counts one more lease on this hold (see `retainLease`). */
  addHolder(): void {
    this.holders += 1;
  }

  /**
   * One lease on this hold was released: the last one ends the hold and removes the node.
   * Resolves at once while other leases hold it (re-entered), else once the node is gone
   * (`removeOwnNode`: removed, or its session over). Never rejects.
   */
  releaseOne(): Promise<void> {
    this.holders -= 1;
    if (this.holders > 0) return settled;
    return this.releaseNode().catch(ignore);
  }

  /** Removes the node (whatever the holders count): release, or clean-up after a loss. */
  releaseNode(): Promise<void> {
    if (this.isHeld) this.end('released');
    return this.removeNode();
  }

  /** A revocation was requested: tell the holder (once); the lease stays held. */
  private revoke(): void {
    if (!this.isHeld || this.revoked$.value) return;
    const revoked = new LockRevokedError(this.path, this.node);
    this.revoked$.next(revoked);
    this.controller.abort(revoked);
  }

  lose(reason: LockLostReason): void {
    if (!this.isHeld) return;
    this.lostError = new LockLostError(this.path, reason);
    this.holdRecord('lost', reason);
    this.setState('lost');
    const lost = this.lostError;
    this.finish(() => lost);
    // While the session may live on (suspended, or the node went), remove what is ours.
    if (reason !== 'session-expired') void this.removeNode().catch(() => {});
  }

  private end(state: 'released'): void {
    if (!this.isHeld) return;
    this.holdRecord(this.revoked$.value ? 'revoked' : state);
    this.setState(state);
    this.finish(() => releasedReason(this.path));
  }

  /** `reason`: what the signal aborts with, made only if someone has or asks for the signal. */
  private finish(reason: () => Error): void {
    this.sessionSubscription?.unsubscribe();
    this.nodeSubscription?.unsubscribe();
    clearTimeout(this.armTimer);
    this.armTimer = undefined;
    this.revoked$.complete();
    this.controller.abortWith(reason);
    this.state$.complete();
  }

  private setState(state: LeaseState): void {
    if (this.state$.value !== state && !this.state$.closed) this.state$.next(state);
  }

  /** Back from `suspended` (policy `continue`): the node must still be there and ours. */
  private confirmAfterReconnect(): void {
    this.client.promises.exists(this.node).then(
      (stat) => {
        if (!stat || stat.ephemeralOwner !== this.sessionId) this.lose('node-deleted');
        else if (this.state$.value === 'suspended') this.setState('held');
      },
      () => {
        // Could not check: the next session event decides.
      },
    );
  }

  private removeNode(): Promise<void> {
    if (!this.removal) {
      this.removal = removeOwnNode(this.client, this.node, this.sessionId);
    }
    return this.removal;
  }
}
