import { describe, expect, it } from 'vitest';
import {
  hasSemaphoreChildren,
  isSemaphoreListing,
  layoutOfAll,
  layoutOfName,
  modeOf,
  participantsOf,
  pendingLease,
  queueKind,
  splitQueue,
} from './inspect-rules';
import { sortChildren } from './recipe/lock-children';

const c = (_n: number) => '_c_0f8fad5b-d9cb-469f-a165-70867728950e-';
const seq = (n: number) => String(n).padStart(10, '0');
const lock = (n: number) => `${c(n)}lock-${seq(n)}`;
const read = (n: number) => `${c(n)}__READ__${seq(n)}`;
const write = (n: number) => `${c(n)}__WRIT__${seq(n)}`;
const latch = (n: number) => `${c(n)}latch-${seq(n)}`;
const lease = (n: number) => `${c(n)}lease-${seq(n)}`;
const kazooLock = (n: number) => `8d1c4b0e1f2a4a1c9d0e7b6a5c4d3e2f__lock__${seq(n)}`;
const kazooRead = (n: number) => `8d1c4b0e1f2a4a1c9d0e7b6a5c4d3e2f__rlock__${seq(n)}`;

/** Who holds and who waits, as node names, for a listing in any order. */
function roles(names: string[]) {
  const children = sortChildren(names);
  const kind = queueKind(children);
  if (kind === undefined) return undefined;
  const entries = participantsOf(kind, children).map((child) => ({ child }));
  const { holders, waiters } = splitQueue(kind, entries);
  return {
    kind,
    holders: holders.map((entry) => entry.child.name),
    waiters: waiters.map((entry) => entry.child.name),
  };
}

describe('inspect rules', () => {
  it('a mutex: the first by sequence holds, the rest wait in order (Curator and kazoo nodes)', () => {
    expect(roles([lock(7), kazooLock(5), lock(6)])).toEqual({
      kind: 'mutex',
      holders: [kazooLock(5)],
      waiters: [lock(6), lock(7)],
    });
  });

  it('a read-write lock: every reader before the first writer holds', () => {
    expect(roles([read(1), read(2), write(3), read(4)])).toEqual({
      kind: 'read-write',
      holders: [read(1), read(2)],
      waiters: [write(3), read(4)],
    });
    // A writer first holds alone, even with readers behind it.
    expect(roles([write(1), read(2), read(3)])).toMatchObject({
      holders: [write(1)],
      waiters: [read(2), read(3)],
    });
    // kazoo: __rlock__ readers, __lock__ writers.
    expect(roles([kazooRead(1), kazooLock(2), kazooRead(3)])).toEqual({
      kind: 'read-write',
      holders: [kazooRead(1)],
      waiters: [kazooLock(2), kazooRead(3)],
    });
    // A mutex node among readers is a writer to them.
    expect(roles([read(1), lock(2), read(3)])).toMatchObject({
      holders: [read(1)],
      waiters: [lock(2), read(3)],
    });
  });

  it("a downgrade's read node (the writer's sequence) holds with its writer", () => {
    const downgrade = `_c_11111111-d9cb-469f-a165-70867728950e-__READ__${seq(3)}`;
    expect(roles([write(3), downgrade, write(4), read(5)])).toEqual({
      kind: 'read-write',
      holders: [write(3), downgrade],
      waiters: [write(4), read(5)],
    });
  });

  it('an election: latch nodes, the first leads', () => {
    expect(roles([latch(2), latch(1)])).toEqual({
      kind: 'election',
      holders: [latch(1)],
      waiters: [latch(2)],
    });
  });

  it('only kazoo __lock__ nodes read as a mutex; names without a marker are no lock', () => {
    expect(roles([kazooLock(1), kazooLock(2)])?.kind).toBe('mutex');
    expect(roles(['config', 'orders'])).toBeUndefined();
    expect(roles([])).toBeUndefined();
    // Sub-directories beside lock nodes do not take part.
    expect(roles([lock(1), 'sub'])).toMatchObject({ holders: [lock(1)], waiters: [] });
    // A marker without a sequence is a path, not a lock node (kazoo's `<semaphore>-__lock__`).
    expect(roles(['semaphore-__lock__', 'lock-files'])).toBeUndefined();
  });

  it('modes and layouts', () => {
    const [kazoo, curatorWrite, curatorRead] = sortChildren([kazooLock(1), write(2), read(3)]);
    expect(modeOf(kazoo!, 'read-write')).toBe('write');
    expect(modeOf(curatorWrite!, 'read-write')).toBe('write');
    expect(modeOf(curatorRead!, 'read-write')).toBe('read');
    expect(modeOf(kazoo!, 'mutex')).toBe('exclusive');
    expect(modeOf(kazoo!, 'election')).toBe('candidate');
    expect(layoutOfName(lock(1))).toBe('curator');
    expect(layoutOfName(kazooLock(1))).toBe('kazoo');
    expect(layoutOfName(kazooRead(1))).toBe('kazoo');
    expect(layoutOfName('8d1c4b0e1f2a4a1c9d0e7b6a5c4d3e2f')).toBe('kazoo');
    expect(layoutOfAll(['curator', 'curator'])).toBe('curator');
    expect(layoutOfAll(['curator', 'kazoo'])).toBe('mixed');
    expect(layoutOfAll([])).toBe('curator');
  });

  it("recognises a semaphore's children (Curator's and zkrx's layout), and nothing else", () => {
    expect(hasSemaphoreChildren(['leases', 'locks'])).toBe(true);
    expect(hasSemaphoreChildren(['leases'])).toBe(true);
    expect(hasSemaphoreChildren(['locks', 'orders'])).toBe(false);
    expect(hasSemaphoreChildren([])).toBe(false);
    expect(isSemaphoreListing([lease(1)], [lock(2)])).toBe(true);
    expect(isSemaphoreListing([lease(1)], undefined)).toBe(true);
    expect(isSemaphoreListing([], [])).toBe(true); // idle, not yet reaped
    // A directory named `locks` holding lock paths is not a semaphore's.
    expect(isSemaphoreListing(undefined, ['orders', 'reports'])).toBe(false);
    expect(isSemaphoreListing(undefined, [])).toBe(false);
    expect(isSemaphoreListing([lock(1)], undefined)).toBe(false);
  });

  it('finds the lease node of the taker still waiting for a free lease', () => {
    const head = { sessionId: 'a', czxid: 10 };
    const leases = [
      { sessionId: 'b', czxid: 5 },
      { sessionId: 'a', czxid: 6 }, // held before it queued again
      { sessionId: 'a', czxid: 11 }, // made while heading `locks`: waiting
    ];
    expect(pendingLease(leases, head)).toBe(leases[2]);
    expect(pendingLease(leases.slice(0, 2), head)).toBeUndefined();
    expect(pendingLease(leases, undefined)).toBeUndefined();
  });
});
