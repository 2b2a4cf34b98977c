/**
 * One path, two kinds of lock: every pair of mutex, read lock, write lock, semaphore and
 * election on one path either excludes as their meanings demand (only readers share) or fails
 * fast with LockConflictError naming both — never both held at once.
 */
import type { ZkClient } from '@zkrx/core';
import {
  acquire,
  acquireSemaphore,
  LockConflictError,
  LockTimeoutError,
  tryAcquire,
} from '@zkrx/lock';
import { acquireRead, acquireWrite, tryAcquireRead, tryAcquireWrite } from '@zkrx/rwlock';
import { childrenOf, connectedClients, lockPath, untilWatching } from '@zkrx/test-support';
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { joinElection } from './index';

type Kind = 'mutex' | 'read' | 'write' | 'semaphore' | 'election';
const kinds: readonly Kind[] = ['mutex', 'read', 'write', 'semaphore', 'election'];

/** A hold of `kind`: released by `release()`. */
async function hold(kind: Kind, client: ZkClient, path: string): Promise<() => Promise<void>> {
  switch (kind) {
    case 'mutex':
      return release(await acquire(client, path));
    case 'read':
      return release(await acquireRead(client, path));
    case 'write':
      return release(await acquireWrite(client, path));
    case 'semaphore':
      return release(await acquireSemaphore(client, path, { leases: 1 }));
    case 'election': {
      const election = joinElection(client, path, { id: 'first' });
      await election.joined;
      await election.whenLeader();
      return () => election.leave();
    }
  }
}

function release(lease: { release(): Promise<void> }): () => Promise<void> {
  return () => lease.release();
}

/**
 * What asking for `kind` gives while another kind holds: `held` (it got in at once), `waits`
 * (the server shows it waiting), `timeout` (it did not get in before its deadline) or the
 * error it failed with. Never blocks on the holder.
 */
async function ask(kind: Kind, client: ZkClient, path: string): Promise<unknown> {
  try {
    switch (kind) {
      case 'mutex':
        return outcomeOf(await tryAcquire(client, path));
      case 'read':
        return outcomeOf(await tryAcquireRead(client, path));
      case 'write':
        return outcomeOf(await tryAcquireWrite(client, path));
      case 'semaphore':
        // No try-once form: a short wait that can only end one way while the other holds.
        return outcomeOf(await acquireSemaphore(client, path, { leases: 1, timeoutMs: 300 }));
      case 'election': {
        const before = await childrenOf(client, path);
        const election = joinElection(client, path, { id: 'second' });
        await election.joined;
        try {
          const names = await childrenOf(client, path);
          const holder = names.find((name) => before.includes(name));
          if (holder) {
            await untilWatching(
              await testZooKeeper(),
              client,
              `${path}/${holder}`,
              election.whenLeader(),
            );
          } else {
            await election.whenLeader();
          }
          return election.isLeader ? 'held' : 'waits';
        } finally {
          await election.leave();
        }
      }
    }
  } catch (error) {
    if (error instanceof LockTimeoutError) return 'timeout';
    return error;
  }
}

async function outcomeOf(lease: { release(): Promise<void> } | null): Promise<string> {
  if (lease === null) return 'waits';
  await lease.release();
  return 'held';
}

const exclusive = (kind: Kind) => kind !== 'read';

describe('two kinds of lock on one path', () => {
  for (const first of kinds) {
    for (const second of kinds) {
      it(`${second} asked while a ${first} holds`, async () => {
        const [a, b] = await connectedClients(2);
        const path = lockPath(`${first}-${second}`);
        const releaseFirst = await hold(first, a!, path);
        const outcome = await ask(second, b!, path);
        if ((first === 'semaphore') !== (second === 'semaphore')) {
          expect(outcome).toBeInstanceOf(LockConflictError);
          expect((outcome as LockConflictError).message).toMatch(/semaphore/);
        } else if (exclusive(first) || exclusive(second)) {
          expect(['waits', 'timeout']).toContain(outcome);
        } else {
          expect(outcome).toBe('held');
        }
        await releaseFirst();
        // Nothing of the refused or abandoned asks is left: only the first one's nodes went.
        await vi.waitUntil(async () =>
          (await childrenOf(a!, path)).every((name) => name === 'leases' || name === 'locks'),
        );
      });
    }
  }
});
