/**
 * joinElection: the candidacy as a handle held at once (`joined`, `leave()`), standing again after
 * a failure with `retryDelayMs`; whileLeader's work seeing its term lost is a loss, not a failure.
 */
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { acquireSemaphore, LeaseReleasedError, LockConflictError, LockLostError } from '@zkrx/lock';
import { childrenOf, connectedClient, connectedClients, lockPath } from '@zkrx/test-support';
import { NEVER, throwError } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { type Election, joinElection, whileLeader } from './index';

/** Frees `path` of a released semaphore's containers, which a queue lock refuses to share. */
async function clearSemaphore(client: Parameters<typeof childrenOf>[0], path: string) {
  for (const name of await childrenOf(client, path)) {
    await client.promises.delete(`${path}/${name}`).catch(() => {});
  }
}

describe('joinElection', () => {
  it('returns the election at once; joined resolves once queued; leave() hands over', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const first = joinElection(a!, path, { id: 'a' });
    expect(first.isLeader).toBe(false);
    expect(first.signal.aborted).toBe(true);
    await first.joined;
    const term = await first.whenLeader();
    const second = joinElection(b!, path, { id: 'b' });
    await second.joined;
    expect(await childrenOf(a!, path)).toHaveLength(2);
    expect(second.isLeader).toBe(false);

    await first.leave();
    expect(term.aborted).toBe(true);
    expect(term.reason).toBeInstanceOf(LeaseReleasedError);
    await second.whenLeader();
    await second.leave();
    expect(await childrenOf(a!, path)).toEqual([]);
    await expect(second.whenLeader()).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.ClientClosed),
    );
  });

  it('leave() before the node is queued rejects joined with ClientClosed and leaves nothing', async () => {
    const client = await connectedClient();
    const path = lockPath('election');
    const election = joinElection(client, path, { id: 'a' });
    const leaving = election.leave();
    await expect(election.joined).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.ClientClosed),
    );
    await leaving;
    await vi.waitUntil(async () => (await childrenOf(client, path)).length === 0);
  });

  it('with retryDelayMs, stands again after a failure it cannot ride out, and leads once it can', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    // A semaphore on the path: an election there fails with LockConflictError.
    const semaphore = await acquireSemaphore(a!, path, { leases: 1 });
    const election = joinElection(b!, path, { id: 'b', retryDelayMs: 10 });
    const states: boolean[] = [];
    election.leadership$.subscribe((leading) => states.push(leading));
    await expect(election.joined).rejects.toBeInstanceOf(LockConflictError);
    expect(election.isLeader).toBe(false);
    await semaphore.release();
    await clearSemaphore(a!, path);
    await election.whenLeader();
    expect(states).toEqual([false, true]);
    await election.leave();
    expect(states).toEqual([false, true, false]);
  });

  it('by default, stands again a second after a failure, until left', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const semaphore = await acquireSemaphore(a!, path, { leases: 1 });
    const election = joinElection(b!, path, { id: 'b' });
    await expect(election.joined).rejects.toBeInstanceOf(LockConflictError);
    // Still standing: it leads once the conflict is gone (its next attempt, a second later).
    await semaphore.release();
    await clearSemaphore(a!, path);
    await election.whenLeader();
    await election.leave();
    await expect(election.whenLeader()).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.ClientClosed),
    );
  });

  it('rejects bad input at once, before anything is sent', async () => {
    const client = await connectedClient();
    const before = await client.promises.children('/');
    const codeOf = (make: () => Election) => {
      try {
        make();
      } catch (error) {
        return (error as { code?: string }).code;
      }
      return 'no error';
    };
    expect(codeOf(() => joinElection(client, 'no-slash'))).toBe('InvalidPath');
    expect(codeOf(() => joinElection(client, '/ok', { id: '' }))).toBe('BadArguments');
    expect(codeOf(() => joinElection(client, '/ok', { retryDelayMs: -1 }))).toBe('BadArguments');
    expect(codeOf(() => joinElection({} as never, '/ok'))).toBe('BadArguments');
    expect(await client.promises.children('/')).toEqual(before);
  });
});

describe('whileLeader', () => {
  it('stands again when the work errors with its term lost (a LockLostError), instead of failing', async () => {
    const client = await connectedClient();
    const path = lockPath('election');
    const terms: number[] = [];
    const errors: unknown[] = [];
    const subscription = whileLeader(client, path, (term) => {
      terms.push(term.fencingToken);
      // The first term's work sees its term lost, as a guard would report it.
      return terms.length === 1 ? throwError(() => new LockLostError(path, 'node-deleted')) : NEVER;
    }).subscribe({ error: (error: unknown) => errors.push(error) });
    await vi.waitUntil(() => terms.length === 2);
    expect(terms[1]).toBeGreaterThan(terms[0]!);
    expect(errors).toEqual([]);
    subscription.unsubscribe();
  });
});
