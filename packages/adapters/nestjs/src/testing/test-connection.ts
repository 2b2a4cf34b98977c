/**
 * ZkTestingModule's stand-in for the module's connection: locks, elections, tick markers and
 * partitions in memory (`test-locks.ts`, `test-election.ts`, `test-fleet.ts`), as the test
 * decides — so that unit tests of services using @Locked, @LeaderOnly and @ForEachOwnedItem need
 * no ZooKeeper. (zkrx's own tests use real servers.)
 */
import {
  type TransactionOp,
  type TransactionResult,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import type { Election } from '@zkrx/leader';
import type { Candidacy } from '@zkrx/leader/candidacy';
import type { Observable } from 'rxjs';
import { notInstalled } from '../connection/optional-peers';
import type { HeldLock, LockKind, LockRequest, Membership } from '../connection/zk-connection';
import { ZkConnection } from '../connection/zk-connection';
import { TestTerms, testElection } from './test-election';
import { TestMembership } from './test-fleet';
import { TestLocks } from './test-locks';
import type { GuardedWrite, TestLedger, ZkTestingOptions } from './test-options';

const notClientCalls = new Set([
  'then',
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
  'toJSON',
]);

/** ZK_CLIENT under ZkTestingModule: any use says there is no ZooKeeper here. */
const noClient = new Proxy(
  {},
  {
    get(_target, property) {
      // What Nest and JavaScript look for on any provider: lifecycle hooks, thenables.
      if (typeof property === 'symbol' || notClientCalls.has(property)) return undefined;
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `ZkTestingModule has no ZooKeeper (client.${String(property)}): test the code that uses the client directly against a real server (@zkrx/testing)`,
      );
    },
  },
) as ZkClient;

/** What one ZkTestingModule application holds in memory, and what the test changes. */
export class TestState implements TestLedger {
  readonly locks = new TestLocks();
  readonly elections = new Map<string, TestTerms>();
  readonly memberships = new Map<string, TestMembership>();
  readonly markers = new Map<string, number>();
  readonly guarded: GuardedWrite[] = [];
  /** Paths the test said this application leads, before it joined them. */
  readonly leadOnJoin = new Set<string>();
  private tokens = 0;

  constructor(readonly options: ZkTestingOptions) {}

  nextToken(): number {
    this.tokens += 1;
    return this.tokens;
  }

  guard(path: string, ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    this.guarded.push({ path, ops: [...ops] });
    return Promise.resolve([]);
  }
}

/** The connection ZkTestingModule gives the decorators and services. */
export class TestConnection extends ZkConnection {
  /**
   * @param state What the application holds in memory.
   * @param candidacy @zkrx/leader's candidacy, when @zkrx/leader is installed (elections need
   *   it, as under ZkModule).
   */
  constructor(
    readonly state: TestState,
    private readonly candidacy: typeof Candidacy | undefined,
  ) {
    super(noClient, false, state.options.id ?? 'test', undefined, {
      rwlock: undefined,
      leader: undefined,
      fleet: undefined,
    });
  }

  override acquireLock(
    kind: LockKind,
    path: string,
    request: LockRequest,
    signal: AbortSignal,
  ): Promise<HeldLock | null> {
    return this.state.locks.acquire(kind, path, request, signal);
  }

  override joinElection(path: string): Election {
    if (!this.candidacy)
      throw notInstalled('@zkrx/leader', `LeaderService.join (election ${path})`);
    const leading = this.state.options.leading !== false || this.state.leadOnJoin.has(path);
    const terms = new TestTerms(path, this.state, leading);
    this.state.elections.set(path, terms);
    return testElection(this.candidacy, this.client, terms, this.id ?? 'test');
  }

  override async claimTick(election: Election, marker: string, tick: number): Promise<boolean> {
    if (!election.isLeader) return false;
    const last = this.state.markers.get(marker);
    if (last !== undefined && !(tick > last)) return false;
    this.state.markers.set(marker, tick);
    return true;
  }

  override joinPartition(
    path: string,
    items: readonly string[] | Observable<readonly string[]>,
  ): Membership {
    const membership = new TestMembership(path, items, this.state);
    this.state.memberships.set(path, membership);
    return membership;
  }

  override track(release: Promise<unknown>): void {
    void release.catch(() => {});
  }
}
