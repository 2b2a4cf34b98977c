import { describe, expect, it } from 'vitest';
import { lock, participant } from '../test/locks';
import { LiveState, sessionEnded } from './live-state';

describe('the live view: what changed between two reads', () => {
  it('taken, handed over, freed; hold times from the take-over it saw', () => {
    const state = new LiveState();
    const a = participant('/l', 'a', { createdAt: 100 });
    const b = participant('/l', 'b', { createdAt: 200 });
    expect(state.update([], 1_000)).toEqual([]);
    expect(state.update([lock('/l', [a])], 2_000)).toMatchObject([
      { kind: 'taken', path: '/l', to: a, lost: false },
    ]);
    expect(state.heldSince(a.node)).toBe(2_000);
    state.update([lock('/l', [a], [b])], 3_000);
    expect(state.update([lock('/l', [b])], 5_000)).toMatchObject([
      { kind: 'handed-over', from: a, to: b, heldMs: 3_000, exact: true, lost: false },
    ]);
    expect(state.heldSince(b.node)).toBe(5_000);
    expect(state.heldSince(a.node)).toBeUndefined();
    expect(state.update([], 6_000)).toMatchObject([{ kind: 'ended', from: b, heldMs: 1_000 }]);
    expect(state.events.map((event) => event.kind)).toEqual(['taken', 'handed-over', 'ended']);
  });

  it('a hold that was there when the view started counts from its node (at most)', () => {
    const state = new LiveState();
    const a = participant('/l', 'a', { createdAt: 100 });
    state.update([lock('/l', [a])], 1_000);
    expect(state.heldSince(a.node)).toBeUndefined();
    expect(state.update([], 2_000)).toMatchObject([{ kind: 'ended', heldMs: 1_900, exact: false }]);
  });

  it("a session's end is proven by its nodes going from two paths in one transaction", () => {
    const c1 = participant('/a', 'c');
    const c2 = participant('/b', 'c');
    const d = participant('/a', 'd');
    const before = [lock('/a', [c1], [d]), lock('/b', [c2])];
    // /a's and /b's last change is one zxid: closeSession.
    const after = [lock('/a', [d], [], { pzxid: 77 })];
    expect(sessionEnded(before, after, (path) => (path === '/b' ? 77 : undefined))).toEqual(
      new Set(['c']),
    );
    // Two transactions (two releases): nothing proven.
    expect(sessionEnded(before, after, () => 78).size).toBe(0);
    // The session still has a node somewhere: alive.
    const c3 = participant('/z', 'c');
    expect(
      sessionEnded([...before, lock('/z', [c3])], [...after, lock('/z', [c3])], () => 77).size,
    ).toBe(0);
    // Nodes under one path only: a release and an expiry look alike.
    expect(sessionEnded([lock('/a', [c1], [d])], [lock('/a', [d])], () => 77).size).toBe(0);
    // Another session's node went from those paths too: which transaction was whose is unknown.
    const e = participant('/b', 'e');
    expect(sessionEnded([lock('/a', [c1], [d]), lock('/b', [c2], [e])], after, () => 77).size).toBe(
      0,
    );
    // The pzxid of a path whose lock is gone is unknown: nothing proven.
    expect(sessionEnded(before, after, () => undefined).size).toBe(0);
  });
});
