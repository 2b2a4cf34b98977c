/**
 * The module's hold on ZooKeeper: the client (made here or given), whether the module owns it,
 * and the election settings; opened when the application boots, closed when it shuts down.
 */
import { createClient, ZkClient, type ZkClientOptions, ZkError, ZkErrorCode } from '@zkrx/core';
import type { SuspendedPolicy } from '@zkrx/lock';
import { LeaseRuns } from '@zkrx/lock/recipe';
import type { ZkModuleOptions } from './module-definition';
import { loadOptionalPeers, type OptionalPeers } from './optional-peers';

export class ZkConnection {
  private readonly stopping = new AbortController();
  /** The @Locked promise runs holding a lock: shutdown waits for them. */
  private readonly runs = new LeaseRuns();

  private constructor(
    /** The client every decorator and service of this application uses. */
    readonly client: ZkClient,
    /** True when the module made the client (and so closes it on shutdown). */
    readonly owned: boolean,
    /** The application's id in elections and partitions (the module's `id`). */
    readonly id: string | undefined,
    /** The default suspended policy of its locks, elections and partitions. */
    readonly onSuspended: SuspendedPolicy | undefined,
    /** @zkrx/rwlock and @zkrx/leader, when installed. */
    readonly peers: OptionalPeers,
  ) {}

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
        throw error;
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
