/**
 * ZkTestingModule's locks: lock paths in memory — one holder (or readers), a queue, another
 * instance's holds, re-entrancy by async context, as the lock package does — for @Locked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import {
  LeaseReleasedError,
  LockLostError,
  type LockLostReason,
  LockTimeoutError,
} from '@zkrx/lock';
import type { HeldLock, LockKind, LockRequest } from '../connection/zk-connection';

/** One hold of a lock path in memory. */
export class TestLease implements HeldLock {
  private readonly controller = new AbortController();
  private released = false;

  constructor(
    readonly path: string,
    readonly kind: LockKind,
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
export class TestLocks {
  private readonly holders = new Map<string, Set<TestLease | 'elsewhere'>>();
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly context = new AsyncLocalStorage<ReadonlyMap<string, TestLease>>();
  private tokens = 0;
  connected = true;

  acquire(
    kind: LockKind,
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
        if (!this.free(undefined, path, kind)) return false;
        stop();
        const lease = new TestLease(path, kind, ++this.tokens, this);
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
   * With a lease: lets it go and wakes the waiters. Without: whether `kind` can be taken on
   * `path` now (only readers share).
   */
  free(lease: TestLease | undefined, path = lease?.path ?? '', kind: LockKind = 'mutex') {
    const holders = this.holdersOf(path);
    if (lease) {
      holders.delete(lease);
      for (const wake of [...(this.waiting.get(path) ?? [])]) wake();
      return true;
    }
    if (holders.size === 0) return true;
    return (
      kind === 'read' &&
      [...holders].every((holder) => holder !== 'elsewhere' && holder.kind === 'read')
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
