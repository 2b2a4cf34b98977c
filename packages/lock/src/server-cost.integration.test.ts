/**
 * What each form of the lock costs the server, in packets (replies and watch notifications),
 * counted on the wire between the client and ZooKeeper (`countedClient`): Curator's counts are 3
 * per uncontended acquire+release and 6 per contended acquisition, and no form may pay more.
 */
import { joinPath, type ZkClient } from '@zkrx/core';
import {
  connectedClient,
  countedClient,
  deferred,
  lockPath,
  type PacketCount,
  untilEmpty,
  untilWatching,
} from '@zkrx/test-support';
import { testZooKeeper } from '@zkrx/testing';
import { defer, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  acquire,
  acquireSemaphore,
  type Lease,
  type LockOptions,
  mutex,
  runLocked,
  semaphore,
  tryAcquire,
  withLock,
} from './index';

/** A hold in one of the forms users write: resolves once held; `release()` lets it go. */
interface Held {
  readonly node: string;
  release(): void;
}
type Form = (client: ZkClient, path: string, options?: LockOptions) => Promise<Held>;

const leaseHeld = (lease: Lease): Held => ({ node: lease.node, release: () => lease.release() });

/** Resolves the lease an observable form emits; `release()` unsubscribes it. */
function observed(
  subscribe: (next: (lease: Lease) => void, error: (e: unknown) => void) => { unsubscribe(): void },
): Promise<Held> {
  return new Promise<Held>((resolve, reject) => {
    const subscription = subscribe(
      (lease) => resolve({ node: lease.node, release: () => subscription.unsubscribe() }),
      reject,
    );
  });
}

/** The mutex's forms, each listening for the lease's end as its users do. */
const mutexForms: readonly (readonly [string, Form])[] = [
  [
    'acquire, nobody listening',
    async (client, path, options) => leaseHeld(await acquire(client, path, options)),
  ],
  [
    'acquire with its signal read (@Locked, zkLock)',
    async (client, path, options) => {
      const lease = await acquire(client, path, options);
      expect(lease.signal.aborted).toBe(false);
      return leaseHeld(lease);
    },
  ],
  [
    'acquire with lost$ subscribed',
    async (client, path, options) => {
      const lease = await acquire(client, path, options);
      lease.lost$.subscribe();
      return leaseHeld(lease);
    },
  ],
  [
    'acquire with a deadline (timeoutMs)',
    async (client, path, options) =>
      leaseHeld(await acquire(client, path, { ...options, timeoutMs: 60_000 })),
  ],
  [
    'the mutex() observable',
    (client, path, options) =>
      observed((next, error) => mutex(client, path, options).subscribe({ next, error })),
  ],
  [
    'withLock',
    (client, path, options) =>
      new Promise<Held>((resolve, reject) => {
        const done = deferred();
        lastValueFrom(
          defer(() => {
            resolve({ node: '', release: () => done.resolve() });
            return done.promise;
          }).pipe(withLock(client, path, options)),
        ).catch(reject);
      }),
  ],
  [
    'runLocked',
    (client, path, options) =>
      new Promise<Held>((resolve, reject) => {
        const done = deferred();
        runLocked(
          client,
          path,
          (lease) => {
            expect(lease.signal.aborted).toBe(false);
            resolve({ node: lease.node, release: () => done.resolve() });
            return done.promise;
          },
          options,
        ).catch(reject);
      }),
  ],
];

/**
 * The server's packets to `packets`' client in `work`, counted once all of them arrived: a read
 * made after `work` (its reply, taken off, comes after every packet sent before it).
 */
async function packetsOf(client: ZkClient, packets: PacketCount, work: () => Promise<void>) {
  const before = packets.total;
  await work();
  await client.promises.exists('/');
  return packets.total - before - 1;
}

/**
 * One acquire+release, before counting: the lock path (containers) is made. A read after the
 * release's delete (sent first) answers once the delete's reply is in.
 */
async function pathMade(client: ZkClient, path: string): Promise<void> {
  await (await acquire(client, path)).release();
  await client.promises.exists('/');
}

describe('what an uncontended acquire+release costs the server, in every form', () => {
  it.each(mutexForms)(
    "%s: three packets (create, listing, delete), Curator's count, the first time as the twentieth",
    async (_, take) => {
      const { client, packets } = await countedClient();
      const observer = await connectedClient();
      const path = lockPath();
      const perRound: number[] = [];
      await pathMade(client, path);
      for (let round = 0; round < 20; round++) {
        const cost = await packetsOf(client, packets, async () => {
          const held = await take(client, path);
          held.release();
          await untilEmpty(observer, path);
        });
        perRound.push(cost);
      }
      // The create with the listing pipelined behind it (one round trip) and the delete. No
      // shortcut skips the listing: what a client knew of a path does not survive the path
      // being reaped and made again (container-reaped tests). A hold released within its first
      // 100 ms is not watched, whoever listens for its end (`Hold.listen`).
      expect(new Set(perRound)).toEqual(new Set([3]));
    },
  );

  it('tryAcquire: three packets too', async () => {
    const { client, packets } = await countedClient();
    const observer = await connectedClient();
    const path = lockPath();
    await pathMade(client, path);
    const cost = await packetsOf(client, packets, async () => {
      const lease = await tryAcquire(client, path);
      await lease?.release();
      await untilEmpty(observer, path);
    });
    expect(cost).toBe(3);
  });

  it('the semaphore: the same packets observed or not (the gate, the lease and its count)', async () => {
    const { client, packets } = await countedClient();
    const observer = await connectedClient();
    const path = lockPath('sem');
    await (await acquireSemaphore(client, path, { leases: 2 })).release();
    await untilEmpty(observer, joinPath(path, 'locks'));
    await client.promises.exists('/');
    const costs: number[] = [];
    for (const take of [
      async () => leaseHeld(await acquireSemaphore(client, path, { leases: 2 })),
      () =>
        observed((next, error) =>
          semaphore(client, path, { leases: 2 }).subscribe({ next, error }),
        ),
    ]) {
      costs.push(
        await packetsOf(client, packets, async () => {
          const held = await take();
          held.release();
          await untilEmpty(observer, joinPath(path, 'leases'));
          await untilEmpty(observer, joinPath(path, 'locks'));
        }),
      );
    }
    // The gate's create and listing, the lease's create, its count and the path's children (one
    // round trip), the gate's delete, the lease's delete.
    expect(costs).toEqual([7, 7]);
  });
});

describe('a lease listened to and held past its first 100 ms', () => {
  it('watches its node from then on: two packets more (the read, and its notification when the release deletes the node)', async () => {
    const server = await testZooKeeper();
    const { client, packets } = await countedClient();
    const observer = await connectedClient();
    const path = lockPath();
    await pathMade(client, path);
    const cost = await packetsOf(client, packets, async () => {
      const lease = await acquire(client, path);
      expect(lease.signal.aborted).toBe(false);
      // The gate: the server shows our session watching the node (armed once the hold is old
      // enough), not a guess at how long that takes.
      await untilWatching(server, client, lease.node);
      await lease.release();
      await untilEmpty(observer, path);
    });
    expect(cost).toBe(5);
  });
});

describe('what a contended acquisition costs the server, in every form (each waiter its own session)', () => {
  it.each(mutexForms)("%s: six packets, Curator's count", async (_, take) => {
    const server = await testZooKeeper();
    const holder = await connectedClient();
    const { client, packets } = await countedClient();
    const path = lockPath();
    const held = await acquire(holder, path);
    const cost = await packetsOf(client, packets, async () => {
      const waiting = take(client, path);
      await untilWatching(server, client, held.node);
      await held.release();
      (await waiting).release();
      await untilEmpty(holder, path);
    });
    // The create and listing, the watch on the holder's node (its read, its notification), the
    // listing after it, the delete.
    expect(cost).toBe(6);
  });
});

describe('one client, many waiters on one path', () => {
  it.each(mutexForms)(
    '%s: two packets per waiter behind its own client’s node: its create, and its removal, which hands over — no watch, no listing',
    async (_, take) => {
      const server = await testZooKeeper();
      const { client, packets } = await countedClient();
      const holder = await connectedClient();
      const path = lockPath();
      const waiters = 8;
      let holders = 0;
      await pathMade(client, path);
      const held = await acquire(holder, path);
      const cost = await packetsOf(client, packets, async () => {
        const all: Promise<void>[] = [];
        // One after the other: each queues once the one before it has.
        for (let index = 0; index < waiters; index++) {
          const queued = deferred();
          all.push(
            (async () => {
              const lease = await take(client, path, { onQueued: () => queued.resolve() });
              holders += 1;
              expect(holders).toBe(1);
              holders -= 1;
              lease.release();
            })(),
          );
          await queued.promise;
        }
        // The first waits on another client's holder, as any waiter does.
        await untilWatching(server, client, held.node);
        await held.release();
        await Promise.all(all);
        await untilEmpty(holder, path);
      });
      // The first: Curator's six (create and listing, the watch on the holder's node and its
      // notification, the listing after it, its removal). Each other: its create alone
      // (ZooKeeper numbers it right after the node before it, of this client: no listing), and
      // its removal — for all but the last a transaction that checks the next waiter's node and
      // deletes ours, which hands over.
      expect(cost).toBe(6 + 2 * (waiters - 1));
    },
  );
});
