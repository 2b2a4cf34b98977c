/**
 * ZkClient: one ZooKeeper session (renewed by itself after expiry), its state as `session$`,
 * its operations as cold observables and promises, and its watch streams — over a transport.
 * The facade: the session lives in `session-keeper.ts`, calls run in `call-runner.ts`, every
 * operation is defined in `operations.ts`, the recipes over calls in `mkdirp.ts`.
 */

import { Observable } from 'rxjs';
import { EnsembleFollower, type EnsembleView } from '../ensemble/ensemble-follower';
import { ZkAbortError, ZkError, ZkErrorCode } from '../errors/errors';
import type { CreateOptions, MkdirpOptions } from '../operations/create-options';
import type { TransactionOp, TransactionResult } from '../operations/transaction';
import { parseConnectString } from '../protocol/hosts';
import { protocolTransport } from '../protocol/transport';
import { SessionKeeper } from '../session/session-keeper';
import {
  isConnectedState,
  isTerminalState,
  type SessionEvent,
  type SessionState,
} from '../session/session-state';
import { leveledLogger } from '../transport/logger';
import { onAbort } from '../transport/on-abort';
import type {
  ClientInfo,
  Created,
  NodeData,
  SessionCredentials,
  Transport,
} from '../transport/transport';
import { WatchRegistry } from '../watches/watch-registry';
import { type TreeEvent, TreeWatches } from '../watches/watch-tree';
import type { Acl } from '../znode/acl';
import type { ZkData } from '../znode/paths';
import { validatePath } from '../znode/paths';
import type { Stat } from '../znode/stat';
import { type CallOptions, CallRunner } from './call-runner';
import { brandClient, isBrandedClient } from './client-brand';
import { resolveClientOptions, type ZkClientOptions } from './client-options';
import {
  type ChildrenWithStat,
  callPromises,
  type VersionOptions,
  versioned,
  type ZkPromises,
} from './client-promises';
import { cold, withSignal } from './cold-call';

export type { CallOptions } from './call-runner';
export type { ChildrenWithStat, VersionOptions, ZkPromises } from './client-promises';

/**
 * A ZooKeeper client whose session, operations and watches are observables. Create it with
 * {@link createClient}.
 */
export class ZkClient {
  /** The connect string the client was created with. */
  readonly connectString: string;
  /**
   * The session's state: replays the latest `{ state, sessionId }` to each subscriber, then
   * every change; completes when the client is closed.
   */
  readonly session$: Observable<SessionEvent>;
  /**
   * What the client follows: the servers it connects to (`hosts`: its connect string's, then
   * the ensemble's configuration's, `followEnsemble`), the configuration's version, the server
   * its session is on, and how many planned moves it made. Replays the latest view, then every
   * change; completes when the client is closed.
   *
   * ## Example
   * ```ts
   * client.ensemble$.subscribe(({ hosts, server }) => console.log(server, 'of', hosts.join(',')));
   * // Output: 10.0.0.5:2181 of 10.0.0.5:2181,10.0.0.6:2181,10.0.0.7:2181
   * ```
   */
  readonly ensemble$: Observable<EnsembleView>;
  /** The operations as promises. */
  readonly promises: ZkPromises;

  private readonly keeper: SessionKeeper;
  private readonly follower: EnsembleFollower;
  private readonly runner: CallRunner;
  private readonly watches: WatchRegistry;
  private readonly trees: TreeWatches;
  private readonly tracked = new Set<Promise<unknown>>();
  private readonly transport: Transport;
  private readonly connectTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly requestedTimeoutMs: number;
  /** True once the session is being torn down (after `close()` waited for tracked work). */
  private tornDown = false;
  private closePromise: Promise<void> | undefined;
  private readonly closeController = new AbortController();

  constructor(options: ZkClientOptions) {
    const resolved = resolveClientOptions(options);
    this.transport = resolved.transport ?? protocolTransport();
    this.connectString = resolved.connect;
    this.connectTimeoutMs = resolved.connectTimeoutMs;
    this.closeTimeoutMs = resolved.closeTimeoutMs;
    this.requestedTimeoutMs = resolved.sessionTimeoutMs;
    const slash = this.connectString.indexOf('/');
    const chroot =
      slash === -1 || this.connectString.length === slash + 1
        ? ''
        : this.connectString.slice(slash);
    const log = leveledLogger(resolved.logger, resolved.logLevel);
    this.follower = new EnsembleFollower(
      {
        handle: () => this.keeper?.handle,
        log,
        tls: resolved.tls !== undefined,
        transportName: this.transport.name,
      },
      resolved.followEnsemble,
      parseConnectString(resolved.connect).endpoints,
      chroot,
    );
    this.ensemble$ = this.follower.view$;
    const host = {
      currentHandle: () => this.keeper.handle,
      whenConnected: (callback: () => void) => this.keeper.whenConnected(callback),
      isClosed: () => this.tornDown,
    };
    this.watches = new WatchRegistry(host);
    this.trees = new TreeWatches({
      ...host,
      transportName: () => this.transport.name,
      childrenWithStat: (path) => this.promises.childrenWithStat(path),
    });
    this.keeper = new SessionKeeper(
      this.transport,
      {
        connect: resolved.connect,
        sessionTimeoutMs: resolved.sessionTimeoutMs,
        connectTimeoutMs: resolved.connectTimeoutMs,
        auth: resolved.auth,
        sasl: resolved.sasl,
        tls: resolved.tls,
        canBeReadOnly: resolved.canBeReadOnly,
        maxFrameBytes: resolved.maxFrameBytes,
        batchReads: resolved.batchReads,
        lookup: resolved.lookup,
        log,
        logLevel: resolved.logger ? resolved.logLevel : 'silent',
      },
      log,
      {
        onNewSession: () => {
          this.watches.resync();
          this.trees.onNewSession();
        },
        onReconnected: () => this.trees.onReconnected(),
        onWatchEvent: (type, path) => {
          this.watches.onEvent(type, path);
          this.trees.onEvent(type, path);
          this.follower.onWatchEvent(path);
        },
        onAuthFailed: () => void this.close(),
        onConnection: (server, readOnly) => this.follower.onConnected(server, readOnly),
        onConnectionLost: () => this.follower.onDisconnected(),
        onMoved: (server, how) => {
          this.follower.onMoved(server, how);
          this.trees.onReconnected('moved');
        },
      },
      () => this.follower.connectString(),
    );
    this.session$ = this.keeper.session$;
    this.runner = new CallRunner(this.keeper, {
      retry: resolved.retry,
      connectTimeoutMs: resolved.connectTimeoutMs,
      connectString: resolved.connect,
      transportName: this.transport.name,
      context: { chroot, defaultAcl: resolved.defaultAcl },
    });
    this.promises = callPromises(this.runner);
    brandClient(this);
  }

  /**
   * True for a client made by any copy of @zkrx/core loaded in the process (its ESM and
   * CommonJS builds are two copies): how the recipes and adapters check the client they are
   * given. `instanceof ZkClient` answers the same.
   *
   * ## Example
   * ```ts
   * console.log(ZkClient.isInstance(createClient({ connect })), ZkClient.isInstance({}));
   * // Output: true false
   * ```
   */
  static isInstance(value: unknown): value is ZkClient {
    return isBrandedClient(value);
  }

  /** `instanceof ZkClient` answers as `isInstance` does, across copies of @zkrx/core. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return isBrandedClient(value);
  }

  /** The current session state. */
  get state(): SessionState {
    return this.keeper.state;
  }

  /**
   * The servers the client connects to (`host:port`): its connect string's until it has read
   * the ensemble's configuration, the configuration's after (`followEnsemble`).
   */
  get hosts(): readonly string[] {
    return this.follower.view.hosts;
  }

  /** The current session id (hex), once connected. */
  get sessionId(): string | undefined {
    return this.keeper.sessionId;
  }

  /**
   * Aborts when `close()` is called, before close waits for tracked work: a recipe gives up what
   * it holds then (its work told to stop) and tracks the release, which close waits for.
   */
  get closing(): AbortSignal {
    return this.closeController.signal;
  }

  /** True once `close()` has been called. */
  get isClosed(): boolean {
    return this.tornDown || this.closePromise !== undefined;
  }

  /** The session's negotiated timeout (ms), or the requested one before the first connection. */
  get sessionTimeoutMs(): number {
    const negotiated = this.keeper.handle?.negotiatedTimeoutMs ?? -1;
    return negotiated > 0 ? negotiated : this.requestedTimeoutMs;
  }

  /**
   * For how much longer (ms) the current session surely lives on the ensemble — it and its
   * ephemeral nodes: locks, leadership — if the servers hear nothing more from this client.
   * ZooKeeper expires a session only after a whole session timeout without hearing from it;
   * this counts that timeout from when the latest request a read-write server answered (a
   * ping, a call, the reconnection) was sent. Negative once that is past: the session may be
   * gone, whatever the client still reports. A stall of this process, a lost connection or a
   * read-only server do not stop the count (a read-only server's answers do not renew it).
   * Undefined without a session (`connecting`, `expired`, closed).
   *
   * ## Example
   * ```ts
   * await client.connected();
   * console.log(client.sessionSurvivesMs! > 0);
   * // Output: true
   * ```
   */
  get sessionSurvivesMs(): number | undefined {
    const state = this.state;
    if (
      this.keeper.handle === undefined ||
      this.sessionId === undefined ||
      state === 'connecting' ||
      state === 'expired' ||
      isTerminalState(state)
    ) {
      return undefined;
    }
    const timeout = this.sessionTimeoutMs;
    return this.keeper.heardAt(timeout) + timeout - performance.now();
  }

  /** True while connected to a read-only server (only with `canBeReadOnly`). */
  get readOnly(): boolean {
    return this.keeper.handle?.readOnly ?? false;
  }

  /** The transport's name: `typescript` (the default) or `native`. */
  get transportName(): string {
    return this.transport.name;
  }

  /** The current session's id and password (hex), e.g. for `@zkrx/testing`'s `expireSession`. */
  sessionCredentials(): SessionCredentials | undefined {
    return isConnectedState(this.state) || this.state === 'suspended'
      ? this.keeper.handle?.credentials()
      : undefined;
  }

  /**
   * Resolves once the client is connected; rejects with ZkError `ConnectTimeout` after
   * `connectTimeoutMs` (or the `timeoutMs` given), `ClientClosed`/`AuthFailed` when it never
   * can be, or a `ZkAbortError` when `signal` aborts first. A number is the timeout.
   *
   * ## Example
   * ```ts
   * const client = createClient({ connect: '127.0.0.1:2181' });
   * await client.connected();
   * console.log(client.state);
   * // Output: connected
   * ```
   */
  connected(options?: number | { timeoutMs?: number; signal?: AbortSignal }): Promise<void> {
    const given =
      typeof options === 'object' && options !== null ? options : { timeoutMs: options };
    const timeoutMs = given.timeoutMs ?? this.connectTimeoutMs;
    const signal = given.signal;
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted)
        return reject(new ZkAbortError('connected', undefined, false, signal.reason));
      let stopListening: (() => void) | undefined;
      let settled = false;
      const cancel = this.keeper.untilConnected(
        timeoutMs,
        'connected',
        this.connectString,
        (error) => {
          settled = true;
          stopListening?.();
          error ? reject(error) : resolve();
        },
      );
      // Settled at once (connected already): nothing to listen for.
      if (signal && !settled) {
        stopListening = onAbort(signal, () => {
          cancel();
          reject(new ZkAbortError('connected', undefined, false, signal.reason));
        });
      }
    });
  }

  /** Creates a node. */
  create(path: string, data?: ZkData, options?: CreateOptions): Observable<Created> {
    return cold((signal) => this.promises.create(path, data, withSignal(options, signal)));
  }

  /** Reads a node's data and metadata. */
  get(path: string, options?: CallOptions): Observable<NodeData> {
    return cold((signal) => this.promises.get(path, withSignal(options, signal)));
  }

  /** Writes a node's data (with a `version`, only when the node is at that version). */
  set(path: string, data: ZkData, options?: number | VersionOptions): Observable<Stat> {
    return cold((signal) => this.promises.set(path, data, withSignal(versioned(options), signal)));
  }

  /** Deletes a node (with a `version`, only when the node is at that version). */
  delete(path: string, options?: number | VersionOptions): Observable<void> {
    return cold((signal) => this.promises.delete(path, withSignal(versioned(options), signal)));
  }

  /** A node's metadata, or `null` when it does not exist. */
  exists(path: string, options?: CallOptions): Observable<Stat | null> {
    return cold((signal) => this.promises.exists(path, withSignal(options, signal)));
  }

  /** A node's children names, sorted. */
  children(path: string, options?: CallOptions): Observable<string[]> {
    return cold((signal) => this.promises.children(path, withSignal(options, signal)));
  }

  /** A node's children names (sorted) and its Stat, in one round trip. */
  childrenWithStat(path: string, options?: CallOptions): Observable<ChildrenWithStat> {
    return cold((signal) => this.promises.childrenWithStat(path, withSignal(options, signal)));
  }

  /** Creates a path and every missing parent (existing nodes are fine). */
  mkdirp(path: string, options?: MkdirpOptions): Observable<void> {
    return cold((signal) => this.promises.mkdirp(path, withSignal(options, signal)));
  }

  /** Waits until the server this client talks to has caught up with the leader for `path`. */
  sync(path: string, options?: CallOptions): Observable<void> {
    return cold((signal) => this.promises.sync(path, withSignal(options, signal)));
  }

  /** A node's ACL and metadata (the observable twin of `promises.getAcl`). */
  getAcl(path: string, options?: CallOptions): Observable<{ acl: Acl[]; stat: Stat }> {
    return cold((signal) => this.promises.getAcl(path, withSignal(options, signal)));
  }

  /** Replaces a node's ACL (with a `version`, only when the ACL is at that version). */
  setAcl(path: string, acl: readonly Acl[], options?: number | VersionOptions): Observable<void> {
    return cold((signal) =>
      this.promises.setAcl(path, acl, withSignal(versioned(options), signal)),
    );
  }

  /**
   * Runs ops as one transaction: all are applied, or none. Fails with the ZkError of the op
   * that failed (its `code`, `path` and `opIndex`). Never retried (the ops are writes).
   *
   * ## Example
   * ```ts
   * const results = await firstValueFrom(
   *   client.multi([op.create('/a', 'x'), op.set('/b', 'y', 2), op.delete('/c')]),
   * );
   * console.log(results.map((result) => result.type));
   * // Output: [ 'create', 'set', 'delete' ]
   * ```
   */
  multi(ops: readonly TransactionOp[], options?: CallOptions): Observable<TransactionResult[]> {
    return cold((signal) => this.promises.multi(ops, withSignal(options, signal)));
  }

  /** The number of nodes under `path`, at every depth (ZooKeeper 3.6+). */
  getAllChildrenNumber(path: string, options?: CallOptions): Observable<number> {
    return cold((signal) => this.promises.getAllChildrenNumber(path, withSignal(options, signal)));
  }

  /** The session's ephemeral nodes whose paths start with `prefix` (default `/`), sorted. */
  getEphemerals(prefix?: string, options?: CallOptions): Observable<string[]> {
    return cold((signal) => this.promises.getEphemerals(prefix, withSignal(options, signal)));
  }

  /** Who the server takes this session for: one entry per authentication (ZooKeeper 3.9+). */
  whoAmI(options?: CallOptions): Observable<ClientInfo[]> {
    return cold((signal) => this.promises.whoAmI(withSignal(options, signal)));
  }

  /** The ensemble's configuration (`/zookeeper/config`): its data and Stat. */
  getConfig(options?: CallOptions): Observable<NodeData> {
    return cold((signal) => this.promises.getConfig(withSignal(options, signal)));
  }

  /**
   * A node's data: emits `{ data, stat }` at once (or `null` while the node is absent), then
   * every change. Subscribers of one path share one ZooKeeper watch; survives reconnects and
   * session expiry (re-read on the new session).
   *
   * ## Example
   * ```ts
   * client.watchData('/config/feature').subscribe((node) => console.log(node?.data.toString() ?? 'absent'));
   * await client.promises.set('/config/feature', 'on');
   * // Output: off
   * //         on
   * ```
   *
   * @param path The node to watch.
   * @return A hot-on-subscribe stream of the node's data.
   */
  watchData(path: string): Observable<NodeData | null> {
    return this.watchOf('data', path);
  }

  /** A node's children names, sorted: emits at once, then every change (`[]` while absent). */
  watchChildren(path: string): Observable<readonly string[]> {
    return this.watchOf('children', path);
  }

  /** A node's metadata: emits at once (`null` while absent), then every creation, change, deletion. */
  watchExists(path: string): Observable<Stat | null> {
    return this.watchOf('exists', path);
  }

  /**
   * Every create, delete and data change of `path` and of every node under it, from one
   * persistent recursive watch (ZooKeeper 3.6+, default transport) shared by all subscribers.
   * Emits `{ type: 'resync', reason: 'started' }` once the watch is in place and the tree has
   * been read (the content it had then is not reported). After a reconnection or a new session
   * it emits a `resync` (`'reconnected'`, `'expired'`), then every change made meanwhile, found
   * by reading the tree again (deletions deepest first, creations, data changes; a node deleted
   * and created again is `deleted` then `created`; changes collapse: a node created and deleted
   * meanwhile is not reported), then the changes since. At least once: a rare change can be
   * reported twice, none is lost. Holds ~220 bytes a node (see the README).
   *
   * With `{ snapshot: false }` the tree is never read nor held for this subscriber: `started`
   * comes as soon as the watch is in place, each change as it is notified, and after a gap only
   * the `resync` — the subscriber reads what it shows again then (reads it sends from the
   * `resync` on see every change its events do not report). What a live view that reads its own
   * copy wants: no walk of the tree at the start or after each gap.
   *
   * ## Example
   * ```ts
   * const tree$ = client.watchTree('/app');
   * tree$.subscribe((event) => console.log(event.type, event.path));
   * await firstValueFrom(tree$); // the `resync` (started): from here on every change is reported
   * await client.promises.create('/app/a', 'x');
   * await client.promises.set('/app/a', 'y');
   * await client.promises.delete('/app/a');
   * // Output: resync /app
   * //         created /app/a
   * //         changed /app/a
   * //         deleted /app/a
   * ```
   *
   * @param path The root of the tree to watch.
   * @param options `snapshot` (default true): false reads nothing (see above).
   * @return A stream of the tree's changes.
   */
  watchTree(path: string, options: { readonly snapshot?: boolean } = {}): Observable<TreeEvent> {
    return new Observable<TreeEvent>((subscriber) => {
      try {
        validatePath(path);
        if (options?.snapshot !== undefined && typeof options.snapshot !== 'boolean') {
          throw new ZkError(
            ZkErrorCode.BadArguments,
            `watchTree ${path}: snapshot must be a boolean`,
            {
              path,
            },
          );
        }
      } catch (error) {
        subscriber.error(error);
        return;
      }
      return this.trees.watch(path, options?.snapshot !== false).subscribe(subscriber);
    });
  }

  /**
   * Keeps `close()` waiting for `work` (bounded by `closeTimeoutMs`): recipes track the lease
   * releases they start from synchronous teardowns this way.
   */
  track(work: Promise<unknown>): void {
    if (this.tornDown) return;
    this.tracked.add(work);
    const forget = () => this.tracked.delete(work);
    work.then(forget, forget);
  }

  /**
   * Closes the session: waits for tracked work (at most `closeTimeoutMs`), closes the session
   * (its ephemeral nodes go with it), fails every pending call with ZkError `ClientClosed` and
   * completes every stream. Safe to call twice; no call after it reaches the server. Never
   * blocks the event loop: resolves when the server confirmed the close, or after a bound.
   */
  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.closeController.abort();
    this.closePromise = this.shutdown();
    return this.closePromise;
  }

  /** `await using client = createClient(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async shutdown(): Promise<void> {
    // Tracked work (lease releases) can only finish while connected; closing the session
    // removes our ephemeral nodes anyway, so never wait on a connection that is down.
    if (this.tracked.size > 0 && isConnectedState(this.state)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let subscription: { unsubscribe(): void } | undefined;
      await Promise.race([
        Promise.allSettled([...this.tracked]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.closeTimeoutMs);
          subscription = this.session$.subscribe(({ state }) => {
            if (!isConnectedState(state)) resolve();
          });
        }),
      ]);
      clearTimeout(timer);
      subscription?.unsubscribe();
    }
    this.tornDown = true;
    this.runner.close();
    this.follower.close();
    // The session and its ephemeral nodes are gone once this resolves (when it was connected).
    await this.keeper.close();
    this.watches.close();
    this.trees.close();
    this.keeper.complete();
  }

  private watchOf<K extends 'data' | 'exists' | 'children'>(kind: K, path: string) {
    return new Observable<
      K extends 'data' ? NodeData | null : K extends 'exists' ? Stat | null : readonly string[]
    >((subscriber) => {
      try {
        validatePath(path);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      return this.watches.watch(kind, path).subscribe(subscriber as never);
    });
  }
}

/**
 * Creates a ZooKeeper client and starts connecting. Options are checked first: a bad one
 * throws ZkError `BadArguments` naming it.
 *
 * ## Example
 * ```ts
 * import { createClient } from '@zkrx/core';
 *
 * const client = createClient({ connect: '127.0.0.1:2181', sessionTimeoutMs: 10_000 });
 * client.session$.subscribe(({ state }) => console.log(state));
 * await client.promises.mkdirp('/app/config');
 * await client.close();
 * // Output: connecting
 * //         connected
 * //         closed
 * ```
 *
 * @param options Where to connect and how.
 * @return The client; `await client.connected()` to wait for the first session.
 */
export function createClient(options: ZkClientOptions): ZkClient {
  return new ZkClient(options);
}
