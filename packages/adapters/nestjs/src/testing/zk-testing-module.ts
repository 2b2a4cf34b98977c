/**
 * ZkTestingModule: ZkModule for unit tests, with no ZooKeeper — locks granted in memory,
 * leadership and owned items as the test decides, and every loss at the test's call.
 */
import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { LockLostReason } from '@zkrx/lock';
import { loadLeaderCandidacy } from '../connection/optional-peers';
import { ZK_CLIENT, ZK_CONNECTION } from '../connection/tokens';
import { LeaderService } from '../leader/leader-service';
import { RetryLaterInterceptor } from '../lock/retry-later';
import { TestConnection, TestState } from './test-connection';
import type { GuardedWrite, ZkTestingOptions } from './test-options';

/**
 * What a unit test decides and reads under ZkTestingModule: `app.get(ZkTesting)`.
 *
 * ## Example
 * ```ts
 * const testing = app.get(ZkTesting);
 * const release = testing.takeLock('/locks/orders/42'); // another instance holds it
 * await expect(orders.ship('42')).rejects.toBeInstanceOf(LockTimeoutError);
 * release();
 * ```
 */
@Injectable()
export class ZkTesting {
  private readonly state: TestState;

  constructor(@Inject(ZK_CONNECTION) connection: unknown) {
    this.state = (connection as TestConnection).state;
  }

  /**
   * Another instance takes the lock at `path` (every lock of the path: mutex, read and write):
   * `@Locked` calls on it wait, skip or time out as against a real holder, until the returned
   * function releases it.
   */
  takeLock(path: string): () => void {
    return this.state.locks.takeElsewhere(path);
  }

  /**
   * This application loses the lock it holds at `path` (`reason`: `session-expired` by
   * default): `lockSignal()` aborts with the LockLostError and the `@Locked` call rejects it.
   */
  loseLock(path: string, reason: LockLostReason = 'session-expired'): void {
    for (const lease of this.state.locks.held()) if (lease.path === path) lease.lose(reason);
  }

  /** The lock paths this application holds now. */
  heldLocks(): string[] {
    return [...new Set(this.state.locks.held().map((lease) => lease.path))];
  }

  /**
   * ZooKeeper out of reach: `@Locked` calls reject ZkError `ConnectionLoss` at once (503 on a
   * route), and this application loses its locks and leaderships (`suspended`), as under the
   * default `onSuspended: 'release'`.
   */
  disconnect(): void {
    this.state.locks.connected = false;
    for (const lease of this.state.locks.held()) lease.lose('suspended');
    for (const path of this.state.elections.keys()) this.loseLeadership(path, 'suspended');
  }

  /** ZooKeeper back: locks can be taken again (leaderships as the test decides: `lead`). */
  reconnect(): void {
    this.state.locks.connected = true;
  }

  /** This application leads the election at `path` (a new term), now or once it joins it. */
  lead(path: string): void {
    const election = this.state.elections.get(path);
    if (election) election.lead();
    else this.state.leadOnJoin.add(path);
  }

  /**
   * This application's term at `path` ends (`reason`: `session-expired` by default):
   * `leaderSignal()` and `LeaderService.signal(path)` abort, `@LeaderOnly` calls skip.
   */
  loseLeadership(path: string, reason: LockLostReason = 'session-expired'): void {
    this.state.leadOnJoin.delete(path);
    this.state.elections.get(path)?.lose(reason);
  }

  /** This application owns exactly `items` of the partition at `path` (joined already). */
  assign(path: string, items: readonly string[]): void {
    this.membership(path).assign(items);
  }

  /** The item `item` of `path` moves away: its `owned.signal` aborts, it is not run again. */
  loseItem(path: string, item: string): void {
    const membership = this.membership(path);
    membership.assign((membership.assignment?.items ?? []).filter((owned) => owned !== item));
  }

  /** Every guarded write (`lease.guard`, `election.guard`, `owned.guard`) made, in order. */
  get guarded(): readonly GuardedWrite[] {
    return this.state.guarded;
  }

  private membership(path: string) {
    const membership = this.state.memberships.get(path);
    if (!membership)
      throw new Error(
        `ZkTesting: ${path} is not joined (FleetService.join, or @ForEachOwnedItem with items)`,
      );
    return membership;
  }
}

/**
 * ZkModule for unit tests of services that use `@Locked`, `@LeaderOnly`, `@ForEachOwnedItem`
 * (with `FleetService` in the providers) and `LeaderService`, without ZooKeeper: locks are
 * granted at once (in memory: two calls on one path still exclude each other), this application
 * leads every election it joins and owns every item of its partitions — unless the test decides
 * otherwise through {@link ZkTesting}. `ZK_CLIENT` is a stand-in that throws on use: test code
 * that calls the client itself against a real server (`@zkrx/testing`). Global.
 *
 * ## Example
 * ```ts
 * const app = await Test.createTestingModule({
 *   imports: [ZkTestingModule.forRoot()],
 *   providers: [Orders],
 * }).compile();
 * await app.init();
 * await app.get(Orders).ship('42'); // runs under an in-memory lock
 * ```
 */
@Module({})
export class ZkTestingModule implements OnApplicationShutdown {
  constructor(@Inject(ZK_CONNECTION) private readonly connection: unknown) {}

  /**
   * The module, global.
   *
   * @param options `id`, `leading` (default true), `owningAll` (default true).
   * @return The module.
   */
  static forRoot(options: ZkTestingOptions = {}): DynamicModule {
    return {
      module: ZkTestingModule,
      global: true,
      providers: [
        {
          provide: ZK_CONNECTION,
          useFactory: async () =>
            new TestConnection(new TestState(options), (await loadLeaderCandidacy())?.Candidacy),
        },
        {
          provide: ZK_CLIENT,
          inject: [ZK_CONNECTION],
          useFactory: (connection: TestConnection) => connection.client,
        },
        LeaderService,
        ZkTesting,
        { provide: APP_INTERCEPTOR, useClass: RetryLaterInterceptor },
      ],
      exports: [ZK_CLIENT, ZK_CONNECTION, LeaderService, ZkTesting],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await (this.connection as TestConnection).close();
  }
}
