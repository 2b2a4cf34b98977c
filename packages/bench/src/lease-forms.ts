/**
 * The forms in which the lock scenarios take a lease (`--form`), as users write them: the
 * promise (`acquire`), the promise with the lease's `signal` read (what `@Locked` and `zkLock`
 * do), and the observable (`mutex()` and its kin), released by unsubscribing.
 */
import type { ZkClient } from '@zkrx/core';
import type { Lease, LockOptions } from '@zkrx/lock';
import type { Observable } from 'rxjs';
import type { LeaseForm } from './options';
import type { RunSettings } from './run-context';

/** A lease held in some form: let it go with `release()`. */
export interface HeldLease {
  readonly lease: Lease;
  release(): Promise<void>;
}

/** A recipe's two forms: its promise and its observable (same options). */
export interface LeaseRecipe<O extends LockOptions> {
  readonly acquire: (client: ZkClient, path: string, options: O) => Promise<Lease>;
  readonly observe: (client: ZkClient, path: string, options: O) => Observable<Lease>;
}

/** Resolves the lease the observable emits; releasing unsubscribes (which releases it). */
function firstLease(lease$: Observable<Lease>): Promise<HeldLease> {
  return new Promise<HeldLease>((resolve, reject) => {
    const subscription = lease$.subscribe({
      next: (lease) =>
        resolve({
          lease,
          release: async () => subscription.unsubscribe(),
        }),
      error: reject,
    });
  });
}

/**
 * Takes a lease of `recipe` in `form`, with the run's `timeoutMs` (if any) among `options`.
 *
 * @param form How (see {@link LeaseForm}).
 * @param recipe The recipe's promise and observable forms.
 * @return A function taking one lease, resolved once held.
 */
export function leaseTaker<O extends LockOptions>(
  settings: Pick<RunSettings, 'form' | 'timeoutMs'>,
  recipe: LeaseRecipe<O>,
): (client: ZkClient, path: string, options: O) => Promise<HeldLease> {
  const form: LeaseForm = settings.form;
  const withDeadline = (options: O): O =>
    settings.timeoutMs === undefined ? options : { ...options, timeoutMs: settings.timeoutMs };
  if (form === 'observable') {
    return (client, path, options) =>
      firstLease(recipe.observe(client, path, withDeadline(options)));
  }
  return async (client, path, options) => {
    const lease = await recipe.acquire(client, path, withDeadline(options));
    // Read as @Locked and zkLock read it: it listens for the lease's end.
    if (form === 'signal' && lease.signal.aborted) throw lease.signal.reason;
    return { lease, release: () => lease.release() };
  };
}
