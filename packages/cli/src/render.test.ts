import { describe, expect, it } from 'vitest';
import { lock, participant } from '../../console/test/locks';
import { noColours } from './format';
import { listed, placeOf, renderLocks } from './render';

describe('the table', () => {
  it('one block a lock: holders, then waiters in line, columns aligned across blocks', () => {
    const orders = lock(
      '/locks/orders',
      [participant('/locks/orders', 'a1', { data: 'web-1:4242', createdAt: 0 })],
      [participant('/locks/orders', 'b2', { createdAt: 5_000 })],
    );
    const pool = lock(
      '/locks/pool',
      [participant('/locks/pool/leases', 'c3', { mode: 'lease', createdAt: 0 })],
      [],
      { kind: 'semaphore', maxLeases: 4, layout: 'kazoo' },
    );
    const lines = renderLocks([orders, pool], { command: 'locks', now: 12_300, paint: noColours });
    expect(lines[0]).toMatch(/^ {2}ROLE +MODE +SESSION +DATA +SINCE +NODE$/);
    expect(lines[1]).toBe('/locks/orders  mutex · curator · 1 holder · 1 waiting');
    expect(lines[2]).toMatch(
      /^ {2}holds +exclusive +0xa1 +web-1:4242 +held ≤12\.3s +_c_.*-lock-\d{10}$/,
    );
    expect(lines[3]).toMatch(/^ {2}waits 1 +exclusive +0xb2 +host-b2:1 +waiting 7\.3s /);
    expect(lines[4]).toBe('');
    expect(lines[5]).toBe('/locks/pool  semaphore · kazoo · 1 of 4 leases held · 0 waiting');
    // Below the lock: the node's path relative to it.
    expect(lines[6]).toMatch(/ leases\/_c_/);
    // Columns line up: every SINCE starts at the same place.
    const since = lines
      .filter((line) => line.startsWith('  ') && / (held|waiting) /.test(line))
      .map((line) => line.search(/ (held|waiting) /));
    expect(new Set(since).size).toBe(1);
  });

  it('a hold whose start the view saw is exact; elections lead; revoke requests show', () => {
    const holder = participant('/e', 'a1', {
      createdAt: 0,
      revokeRequested: true,
      data: '__REVOKE__',
    });
    const [, , row] = renderLocks([lock('/e', [holder], [], { kind: 'election' })], {
      command: 'leaders',
      now: 10_000,
      paint: noColours,
      heldSince: () => 7_500,
    });
    expect(row).toMatch(/^ {2}leads .* revoke requested +held 2\.5s /);
  });

  it('locks lists locks, leaders lists elections (and the mutex layout they share)', () => {
    const all = [
      lock('/m', []),
      lock('/rw', [], [], { kind: 'read-write' }),
      lock('/s', [], [], { kind: 'semaphore' }),
      lock('/e', [], [], { kind: 'election' }),
    ];
    expect(listed('locks', all).map((found) => found.path)).toEqual(['/m', '/rw', '/s']);
    expect(listed('leaders', all).map((found) => found.path)).toEqual(['/m', '/e']);
    expect(renderLocks([], { command: 'locks', now: 0, paint: noColours })).toEqual([]);
  });

  it("a semaphore taker's waiting lease has its taker's place", () => {
    const semaphore = lock(
      '/s',
      [],
      [
        participant('/s/locks', 't1'),
        participant('/s/leases', 't1', { mode: 'lease' }),
        participant('/s/locks', 't2'),
      ],
      { kind: 'semaphore' },
    );
    expect([0, 1, 2].map((index) => placeOf(semaphore, index))).toEqual([1, 1, 2]);
  });
});
