/**
 * ZkTestingModule's partitions: a membership in memory, owning what the test (or `owningAll`)
 * says, and its owned items, for FleetService and @ForEachOwnedItem.
 */
import type { TransactionOp, TransactionResult } from '@zkrx/core';
import type { Assignment, OwnedItem } from '@zkrx/fleet';
import { LockLostError, type LockLostReason } from '@zkrx/lock';
import { LeaseRuns } from '@zkrx/lock/recipe';
import { EMPTY, isObservable, type Observable, ReplaySubject, type Subscription } from 'rxjs';
import type { Membership } from '../connection/zk-connection';
import type { TestLedger } from './test-options';

/** An owned item in memory. */
export class TestOwnedItem implements OwnedItem {
  private readonly controller = new AbortController();
  private readonly runs = new LeaseRuns();

  constructor(
    readonly item: string,
    readonly path: string,
    readonly fencingToken: number,
    private readonly testing: TestLedger,
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
export class TestMembership implements Membership {
  readonly joined: Promise<void>;
  /** Nothing fails in memory. */
  readonly errors$ = EMPTY;
  private latest: Assignment | undefined;
  private readonly assignments = new ReplaySubject<Assignment>(1);
  private readonly runs = new LeaseRuns();
  private items: readonly string[] = [];
  private source: Subscription | undefined;
  private left: Promise<void> | undefined;

  constructor(
    readonly path: string,
    items: readonly string[] | Observable<readonly string[]>,
    private readonly testing: TestLedger,
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
