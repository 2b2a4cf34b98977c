/**
 * ZkTestingModule's stand-in for the module's connection: locks, elections, tick markers and
 * partitions in memory, as the test decides — so that unit tests of services using @Locked,
 * @LeaderOnly and @ForEachOwnedItem need no ZooKeeper. (zkrx's own tests use real servers.)
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type TransactionOp,
  type TransactionResult,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import type { Assignment, OwnedItem } from '@zkrx/fleet';
import type { Election } from '@zkrx/leader';
import {
  LeaseReleasedError,
  LockLostError,
  type LockLostReason,
  LockTimeoutError,
} from '@zkrx/lock';
import {
  BehaviorSubject,
  EMPTY,
  isObservable,
  type Observable,
  ReplaySubject,
  type Subscription,
} from 'rxjs';
import type { HeldLock, LockChoice, LockRequest, Membership } from './zk-connection';
import { ZkConnection } from './zk-connection';

/** How a ZkTestingModule application starts. */
export interface ZkTestingOptions {
  /** This application's id (as ZkModule's `id`). Default `test`. */
  id?: string;
  /** Leads every election it joins, at once (default true); false: only after `lead(path)`. */
  leading?: boolean;
  /** Owns every item of every partition it joins (default true); false: only `assign(...)`. */
  owningAll?: boolean;
}

/** Every write a lease, a term or an owned item guarded: the test reads them. */
export interface GuardedWrite {
  /** The lock, election or item path whose holder wrote. */
  readonly path: string;
  readonly ops: readonly TransactionOp[];
}

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

/** One hold of a lock path in memory. */
class TestLease implements HeldLock {
  private readonly controller = new AbortController();
  private released = false;

  constructor(
    readonly path: string,
    readonly choice: LockChoice,
    readonly fencingToken: number,
    private readonly locks: TestLocks,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    if (!this.controller.signal.aborted) {
      this.controller.abort(new LeaseReleasedError(this.path));
    }
    this.locks.free(this);
    return Promise.resolve();
  }

  run<T>(fn: () => T): T {
    return this.locks.runHolding(this.path, this, fn);
  }

  lose(reason: LockLostReason): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(new LockLostError(this.path, reason));
    this.released = true;
    this.locks.free(this);
  }
}

/** Lock paths in memory: one holder (or readers), a queue, another instance's holds. */
class TestLocks {
  private readonly holders = new Map<string, Set<TestLease | 'elsewhere'>>();
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly context = new AsyncLocalStorage<ReadonlyMap<string, TestLease>>();
  private tokens = 0;
  connected = true;

  acquire(
    choice: LockChoice,
    path: string,
    request: LockRequest,
    signal: AbortSignal,
  ): Promise<HeldLock | null> {
    if (!this.connected) {
      return Promise.reject(new ZkError(ZkErrorCode.ConnectionLoss, 'ZkTesting: disconnected'));
    }
    const enclosing = this.context.getStore()?.get(path);
    // Re-entrant, as the lock package is: the async context holding it runs at once.
    if (enclosing && !enclosing.signal.aborted) {
      return Promise.resolve({
        path,
        fencingToken: enclosing.fencingToken,
        signal: enclosing.signal,
        release: () => Promise.resolve(),
        run: <T>(fn: () => T) => fn(),
      } satisfies HeldLock & { path: string });
    }
    const started = performance.now();
    return new Promise<HeldLock | null>((resolve, reject) => {
      const timer =
        request.mode === 'wait' && request.timeoutMs !== undefined
          ? setTimeout(() => {
              stop();
              reject(new LockTimeoutError(path, performance.now() - started));
            }, request.timeoutMs)
          : undefined;
      const onAbort = () => {
        stop();
        reject(signal.reason);
      };
      const attempt = () => {
        if (!this.free(undefined, path, choice)) return false;
        stop();
        const lease = new TestLease(path, choice, ++this.tokens, this);
        this.holdersOf(path).add(lease);
        resolve(lease);
        return true;
      };
      const stop = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiting.get(path)?.delete(attempt as () => void);
      };
      if (signal.aborted) return onAbort();
      if (attempt()) return;
      if (request.mode === 'skip') {
        stop();
        resolve(null);
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.waiting.get(path) ?? new Set<() => void>();
      queue.add(attempt as () => void);
      this.waiting.set(path, queue);
    });
  }

  /**
   * With a lease: lets it go and wakes the waiters. Without: whether `choice` can be taken on
   * `path` now (only readers share).
   */
  free(lease: TestLease | undefined, path = lease?.path ?? '', choice: LockChoice = 'mutex') {
    const holders = this.holdersOf(path);
    if (lease) {
      holders.delete(lease);
      for (const wake of [...(this.waiting.get(path) ?? [])]) wake();
      return true;
    }
    if (holders.size === 0) return true;
    return (
      choice === 'read' &&
      [...holders].every((holder) => holder !== 'elsewhere' && holder.choice === 'read')
    );
  }

  runHolding<T>(path: string, lease: TestLease, fn: () => T): T {
    const held = new Map(this.context.getStore() ?? []);
    held.set(path, lease);
    return this.context.run(held, fn);
  }

  /** Another instance holds `path` until the returned function is called. */
  takeElsewhere(path: string): () => void {
    this.holdersOf(path).add('elsewhere');
    return () => {
      this.holdersOf(path).delete('elsewhere');
      for (const wake of [...(this.waiting.get(path) ?? [])]) wake();
    };
  }

  held(): TestLease[] {
    return [...this.holders.values()].flatMap((set) =>
      [...set].filter((holder): holder is TestLease => holder !== 'elsewhere'),
    );
  }

  private holdersOf(path: string): Set<TestLease | 'elsewhere'> {
    let holders = this.holders.get(path);
    if (!holders) {
      holders = new Set();
      this.holders.set(path, holders);
    }
    return holders;
  }
}

/** Runs kept in view until they settle (leave waits for them). */
class Runs {
  private readonly running = new Set<Promise<unknown>>();

  track<T extends PromiseLike<unknown>>(run: T): T {
    const settled = Promise.resolve(run).then(
      () => {},
      () => {},
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return run;
  }

  run<T>(work: () => T): T {
    const result = work();
    if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
      this.track(result as PromiseLike<unknown>);
    }
    return result;
  }

  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}

/** An election in memory: leads when the test (or `leading`) says so. */
class TestElection implements Election {
  readonly joined = Promise.resolve();
  private readonly state = new BehaviorSubject(false);
  readonly leadership$: Observable<boolean> = this.state.asObservable();
  private term: AbortController = abortedTerm();
  private token: number | undefined;
  private readonly runs = new Runs();
  private left: Promise<void> | undefined;

  constructor(
    readonly path: string,
    private readonly testing: TestState,
  ) {}

  get isLeader(): boolean {
    return this.state.value;
  }

  get fencingToken(): number | undefined {
    return this.isLeader ? this.token : undefined;
  }

  get signal(): AbortSignal {
    return this.term.signal;
  }

  whenLeader(): Promise<AbortSignal> {
    if (this.isLeader) return Promise.resolve(this.signal);
    return new Promise((resolve, reject) => {
      const watching: Subscription = this.leadership$.subscribe({
        next: (leading) => {
          if (!leading) return;
          queueMicrotask(() => watching.unsubscribe());
          resolve(this.signal);
        },
        complete: () =>
          reject(new ZkError(ZkErrorCode.ClientClosed, `election ${this.path}: left`)),
      });
    });
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    return this.runs.track(run);
  }

  runIfLeader<T>(work: (signal: AbortSignal) => T): T | undefined {
    if (!this.isLeader) return undefined;
    const { signal } = this;
    return this.runs.run(() => work(signal));
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    if (!this.isLeader) return Promise.reject(this.signal.reason);
    return this.testing.guard(this.path, ops);
  }

  /** A new term begins. */
  lead(): void {
    if (this.isLeader || this.left) return;
    this.term = new AbortController();
    this.token = this.testing.nextToken();
    this.state.next(true);
  }

  /** The term ends with `reason` (a loss, or a release). */
  stepDown(reason: unknown): void {
    if (!this.isLeader) return;
    this.term.abort(reason);
    this.state.next(false);
  }

  leave(): Promise<void> {
    this.left ??= (async () => {
      this.stepDown(new LeaseReleasedError(this.path));
      await this.runs.settled();
      this.state.complete();
    })();
    return this.left;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.leave();
  }
}

function abortedTerm(): AbortController {
  const controller = new AbortController();
  controller.abort(new ZkError(ZkErrorCode.Aborted, 'not leading'));
  return controller;
}

/** An owned item in memory. */
class TestOwnedItem implements OwnedItem {
  private readonly controller = new AbortController();
  private readonly runs = new Runs();

  constructor(
    readonly item: string,
    readonly path: string,
    readonly fencingToken: number,
    private readonly testing: TestState,
  ) {}

  get node(): string {
    return `${this.path}/items/${this.item}/test-${this.fencingToken}`;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get isOwned(): boolean {
    return !this.controller.signal.aborted;
  }

  runIfOwned<T>(work: (signal: AbortSignal) => T): T | undefined {
    return this.isOwned ? this.runs.run(() => work(this.signal)) : undefined;
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    return this.runs.track(run);
  }

  guard(ops: readonly TransactionOp[]): Promise<TransactionResult[]> {
    if (!this.isOwned) return Promise.reject(this.signal.reason);
    return this.testing.guard(`${this.path}/items/${this.item}`, ops);
  }

  end(reason: LockLostReason): void {
    this.controller.abort(new LockLostError(`${this.path}/items/${this.item}`, reason));
  }

  settled(): Promise<void> {
    return this.runs.settled();
  }
}

/** A partition membership in memory: owns what the test (or `owningAll`) says. */
class TestMembership implements Membership {
  readonly joined: Promise<void>;
  /** Nothing fails in memory. */
  readonly errors$ = EMPTY;
  private latest: Assignment | undefined;
  private readonly assignments = new ReplaySubject<Assignment>(1);
  private readonly runs = new Runs();
  private items: readonly string[] = [];
  private source: Subscription | undefined;
  private left: Promise<void> | undefined;

  constructor(
    readonly path: string,
    items: readonly string[] | Observable<readonly string[]>,
    private readonly testing: TestState,
  ) {
    let settle: () => void = () => {};
    this.joined = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const take = (set: readonly string[]) => {
      this.items = set;
      if (this.testing.options.owningAll !== false) this.assign(set);
      else if (!this.latest) this.assign([]);
      settle();
    };
    if (isObservable(items)) this.source = items.subscribe({ next: take });
    else take(items);
  }

  get assignment(): Assignment | undefined {
    return this.left ? undefined : this.latest;
  }

  get assignment$(): Observable<Assignment> {
    return this.assignments.asObservable();
  }

  track<T extends PromiseLike<unknown>>(run: T): T {
    return this.runs.track(run);
  }

  /** This member owns exactly `owned` (of its items or not: the test decides). */
  assign(owned: readonly string[]): void {
    const before = this.latest?.owned ?? new Map<string, OwnedItem>();
    const next = new Map<string, OwnedItem>();
    for (const item of [...owned].sort()) {
      const kept = before.get(item);
      next.set(
        item,
        kept?.isOwned
          ? kept
          : new TestOwnedItem(item, this.path, this.testing.nextToken(), this.testing),
      );
    }
    for (const [item, was] of before) {
      if (!next.has(item)) (was as TestOwnedItem).end('node-deleted');
    }
    this.latest = {
      items: [...next.keys()],
      added: [...next.keys()].filter((item) => !before.has(item)),
      removed: [...before.keys()].filter((item) => !next.has(item)),
      owned: next,
      poisoned: new Map(),
    };
    this.assignments.next(this.latest);
  }

  /** The items joined with (the set's last value). */
  get joinedItems(): readonly string[] {
    return this.items;
  }

  leave(): Promise<void> {
    this.left ??= (async () => {
      this.source?.unsubscribe();
      for (const owned of this.latest?.owned.values() ?? [])
        (owned as TestOwnedItem).end('node-deleted');
      await this.runs.settled();
      await Promise.all(
        [...(this.latest?.owned.values() ?? [])].map((owned) => (owned as TestOwnedItem).settled()),
      );
      this.assignments.complete();
    })();
    return this.left;
  }
}

/** What one ZkTestingModule application holds in memory, and what the test changes. */
export class TestState {
  readonly locks = new TestLocks();
  readonly elections = new Map<string, TestElection>();
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
  constructor(readonly state: TestState) {
    super(noClient, false, state.options.id ?? 'test', undefined, {
      rwlock: undefined,
      leader: undefined,
      fleet: undefined,
    });
  }

  override acquireLock(
    choice: LockChoice,
    path: string,
    request: LockRequest,
    signal: AbortSignal,
  ): Promise<HeldLock | null> {
    return this.state.locks.acquire(choice, path, request, signal);
  }

  override joinElection(path: string): Election {
    const election = new TestElection(path, this.state);
    this.state.elections.set(path, election);
    if (this.state.options.leading !== false || this.state.leadOnJoin.has(path)) election.lead();
    return election;
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
