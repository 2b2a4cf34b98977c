import { describe, expect, it } from 'vitest';
import type { Lease } from './lease';
import { LeaseRuns } from './lease-runs';

/** The one thing a run asks of its lease: an async context (recorded here). */
function contextLease(entered: string[]): Lease {
  return {
    run: <T>(fn: () => T): T => {
      entered.push('lease');
      return fn();
    },
  } as Lease;
}

function gate() {
  let open!: () => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

describe('LeaseRuns', () => {
  it('settles once every run kept in view has, those added meanwhile included, either way', async () => {
    const runs = new LeaseRuns();
    const first = gate();
    const second = gate();
    runs.track(first.promise);
    let settled = false;
    const waiting = runs.settled().then(() => {
      settled = true;
    });
    expect(runs.busy).toBe(true);
    runs.track(second.promise);
    first.fail(new Error('the run failed'));
    await first.promise.catch(() => {});
    await Promise.resolve();
    expect(settled).toBe(false);
    second.open();
    await waiting;
    expect(runs.busy).toBe(false);
  });

  it('runs work under the lease with the signal, keeping a promise it returns and not a value', async () => {
    const entered: string[] = [];
    const runs = new LeaseRuns();
    const signal = new AbortController().signal;
    expect(runs.runUnder(contextLease(entered), signal, (given) => given === signal)).toBe(true);
    expect(runs.busy).toBe(false);
    const pending = gate();
    const run = runs.runUnder(contextLease(entered), signal, () => pending.promise);
    expect(run).toBe(pending.promise);
    expect(runs.busy).toBe(true);
    expect(entered).toEqual(['lease', 'lease']);
    pending.open();
    await runs.settled();
    expect(runs.busy).toBe(false);
  });
});
