/**
 * The leadership a @LeaderOnly run (or a `LeaderService.runIfLeader` work) runs under, readable
 * from anywhere in its async context, as `lockSignal()` is for @Locked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` with `signal` as the current leadership's signal. */
export function runWithLeadership<T>(signal: AbortSignal, fn: () => T): T {
  return storage.run(signal, fn);
}

/**
 * The AbortSignal of the leadership the current @LeaderOnly run (or `runIfLeader` work) runs
 * under: it aborts when that term ends — leadership lost (reason: the LockLostError), left, or
 * the application shutting down (reason: ZkError `ClientClosed`; the run is waited for before
 * the hand-over). Pass it on to stop work another instance may now be doing. Undefined outside.
 *
 * ## Example
 * ```ts
 * @Cron('0 * * * * *')
 * @LeaderOnly('/election/billing')
 * async chargeDueInvoices() {
 *   for (const invoice of await this.due()) {
 *     leaderSignal()?.throwIfAborted();
 *     await this.charge(invoice, { signal: leaderSignal() });
 *   }
 * }
 * ```
 *
 * @return The current leadership's signal, or undefined.
 */
export function leaderSignal(): AbortSignal | undefined {
  return storage.getStore();
}
