/**
 * The module's hold on ZooKeeper: the client (made here or given), whether the module owns it,
 * the application's settings, and the one place the decorators and services take locks, join
 * elections and partitions (ZkTestingModule puts a stand-in here); opened when the application
 * boots, closed when it shuts down.
 */
import { createClient, ZkClient, type ZkClientOptions, ZkError, ZkErrorCode } from '@zkrx/core';
import type { Assignment, PartitionMembership, PartitionOptions } from '@zkrx/fleet';
import type { Election } from '@zkrx/leader';
import type { Lease, SuspendedPolicy } from '@zkrx/lock';
import { acquireWhileConnected } from '@zkrx/lock/adapter';
import { LeaseRuns, type LockRecipe, mutexRecipe } from '@zkrx/lock/recipe';
import type { Observable } from 'rxjs';
import type { ZkModuleOptions } from './module-definition';
import { loadOptionalPeers, notInstalled, type OptionalPeers } from './optional-peers';
import { claimTick } from './tick-marker';

/**
 * The lock of a path @Locked takes: its mutex, or its read or write lock (@zkrx/rwlock's
 * `LockKind`, declared here: @zkrx/rwlock is an optional peer).
 */
export type LockKind = 'mutex' | 'read' | 'write';

/** What @Locked asks for: wait or not, how long, and the suspended policy. */
export interface LockRequest {
  readonly mode: 'wait' | 'skip';
  readonly timeoutMs: number | undefined;
  readonly onSuspended: SuspendedPolicy | undefined;
}

/** What @Locked uses of a lease. */
export type HeldLock = Pick<Lease, 'signal' | 'fencingToken' | 'release' | 'run'>;

/**
 * The boot's ConnectTimeout, saying what to do: the first thing a new app meets when it starts
 * before ZooKeeper does (the cause is the client's own error).
 */
function notReached(error: ZkError): ZkError {
  return new ZkError(
    ZkErrorCode.ConnectTimeout,
    `ZkModule could not start the application: ${error.message}. Start ZooKeeper there ` +
      '(for development: npx @zkrx/cli dev-server, on 127.0.0.1:2181) or give ZkModule the right ' +
      '`connect`; `waitForConnection: false` starts the application without waiting',
    { cause: error },
  );
}

/** What FleetService uses of a membership (and its assignments). */
export type Membership = Pick<
  PartitionMembership,
  'joined' | 'assignment' | 'errors$' | 'leave' | 'track'
> & {
  readonly assignment$: Observable<Assignment>;
};

export class ZkConnection {
  private readonly stopping = new AbortController();
  /** The @Locked promise runs holding a lock: shutdown waits for them. */
  private readonly runs = new LeaseRuns();

  protected constructor(
    /** The client every decorator and service of this application uses. */
    readonly client: ZkClient,
    /** True when the module made the client (and so closes it on shutdown). */
    readonly owned: boolean,
    /** The application's id in elections and partitions (the module's `id`). */
    readonly id: string | undefined,
    /** The default suspended policy of its locks, elections and partitions. */
    readonly onSuspended: SuspendedPolicy | undefined,
    /** @zkrx/rwlock, @zkrx/leader and @zkrx/fleet, when installed. */
    readonly peers: OptionalPeers,
  ) {}

  /**
   * Takes the lock `kind` of `path` for @Locked: the mutex from @zkrx/lock, read and write
   * from @zkrx/rwlock; rejects at once while not connected (`acquireWhileConnected`).
   */
  acquireLock(
    kind: LockKind,
    path: string,
    request: LockRequest,
    signal: AbortSignal,
  ): Promise<HeldLock | null> {
    let recipe: LockRecipe;
    if (kind === 'mutex') recipe = mutexRecipe;
    else {
      const rwlock = this.peers.rwlock;
      if (!rwlock) {
        return Promise.reject(notInstalled('@zkrx/rwlock', `@Locked with lock: '${kind}'`));
      }
      recipe = rwlock.lockKinds[kind];
    }
    const { client } = this;
    const options = { timeoutMs: request.timeoutMs, onSuspended: request.onSuspended };
    return acquireWhileConnected(
      client,
      (abort) =>
        request.mode === 'skip'
          ? recipe.tryAcquire(client, path, { ...options, signal: abort })
          : recipe.acquire(client, path, { ...options, signal: abort }),
      signal,
    );
  }

  /** Joins the election at `path` as this application (@zkrx/leader's `joinElection`). */
  joinElection(path: string): Election {
    const leader = this.peers.leader;
    if (!leader) throw notInstalled('@zkrx/leader', `LeaderService.join (election ${path})`);
    return leader.joinElection(this.client, path, { id: this.id, onSuspended: this.onSuspended });
  }

  /** Claims `tick` in the marker at `marker`, fenced by `election` (tick-marker.ts). */
  claimTick(election: Election, marker: string, tick: number): Promise<boolean> {
    return claimTick(this.client, election, marker, tick);
  }

  /** Joins the partition at `path` (@zkrx/fleet's `joinPartition`). */
  joinPartition(
    path: string,
    items: readonly string[] | Observable<readonly string[]>,
    options: PartitionOptions,
  ): Membership {
    const fleet = this.peers.fleet;
    if (!fleet) throw notInstalled('@zkrx/fleet', `FleetService.join (partition ${path})`);
    return fleet.joinPartition(this.client, path, items, options);
  }

  /** Keeps a release in view until it settles (the client's close waits for it). */
  track(release: Promise<unknown>): void {
    this.client.track(release);
  }

  /**
   * Takes the given client or makes one, and waits for the first connection unless told not to.
   * A client made here is closed again when that wait fails.
   */
  static async open(options: ZkModuleOptions): Promise<ZkConnection> {
    if (typeof options !== 'object' || options === null) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        'ZkModule: options must be { client } or the options of createClient ({ connect, ... })',
      );
    }
    const { waitForConnection, id, onSuspended, ...rest } = options;
    const peers = await loadOptionalPeers();
    let connection: ZkConnection;
    if ('client' in rest) {
      if (!ZkClient.isInstance(rest.client)) {
        throw new ZkError(
          ZkErrorCode.BadArguments,
          "ZkModule: options.client must be a ZkClient from @zkrx/core's createClient",
        );
      }
      connection = new ZkConnection(rest.client, false, id, onSuspended, peers);
    } else {
      const client = createClient(rest as ZkClientOptions);
      connection = new ZkConnection(client, true, id, onSuspended, peers);
    }
    if (waitForConnection !== false) {
      try {
        await connection.client.connected();
      } catch (error) {
        await connection.close();
        throw ZkError.isInstance(error) && error.code === ZkErrorCode.ConnectTimeout
          ? notReached(error)
          : error;
      }
    }
    return connection;
  }

  /**
   * Aborts when the application begins to shut down (reason: ZkError `ClientClosed`): calls
   * waiting for a lock give up, and methods holding one are asked to finish.
   */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Aborts `signal` (idempotent): the first step of the application's shutdown. */
  stop(): void {
    this.stopping.abort(new ZkError(ZkErrorCode.ClientClosed, 'the application is shutting down'));
  }

  /** Keeps `run` (a @Locked method holding its lock) in view until it settles; returns it. */
  hold<T>(run: Promise<T>): Promise<T> {
    return this.runs.track(run);
  }

  /**
   * Shuts down: aborts `signal`, waits for the @Locked methods still holding a lock to return
   * (each releases its lock as it does: nobody else gets in while one still runs), then closes
   * the client if the module made it (its session, leases and elections end with it).
   */
  async close(): Promise<void> {
    this.stop();
    await this.runs.settled();
    if (this.owned) await this.client.close();
  }
}
