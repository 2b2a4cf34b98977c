/**
 * Work run under a lease and kept in view until it settles: what lets a holder (an election's
 * leader, a fleet's item owner, an adapter shutting down) let go only once its work is over.
 */
import type { Lease } from './lease';

const ignore = () => {};

/** Whether `value` is a promise or any thenable (what a run returns when it goes on). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * The runs done under a lease, kept until they settle (either way), so that its holder releases
 * the lease only after them: the next holder never starts while one still runs. A run cannot be
 * waited for when the lease is lost instead: the signal it was given tells it.
 *
 * ## Example
 * ```ts
 * const runs = new LeaseRuns();
 * runs.runUnder(lease, lease.signal, (signal) => syncTenant(tenant, { signal }));
 * await runs.settled(); // the sync has settled
 * await lease.release();
 * ```
 */
export class LeaseRuns {
  private readonly running = new Set<Promise<void>>();

  /**
   * Keeps `run` in view until it settles (either way).
   *
   * @param run A promise (or any thenable).
   * @return `run` itself.
   */
  track<T extends PromiseLike<unknown>>(run: T): T {
    const settled = Promise.resolve(run).then(ignore, ignore);
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return run;
  }

  /**
   * Runs `work()` and keeps what it returns in view when that is a promise (or any thenable).
   *
   * @param work The work.
   * @return What `work` returns.
   */
  run<T>(work: () => T): T {
    const result = work();
    if (isThenable(result)) this.track(result);
    return result;
  }

  /**
   * Runs `work(signal)` in an async context holding `lease` (re-acquiring its lock inside
   * re-enters it), and keeps what it returns in view when that is a promise (or any thenable).
   *
   * @param lease The lease the work runs under.
   * @param signal What the work is given: aborts when it must stop.
   * @param work The work.
   * @return What `work` returns.
   */
  runUnder<T>(lease: Lease, signal: AbortSignal, work: (signal: AbortSignal) => T): T {
    return this.run(() => lease.run(() => work(signal)));
  }

  /** True while a run kept in view has not settled. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** Resolves once every run kept in view has settled, those added meanwhile included. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
