/**
 * The rules watchTree reports a gap with (no server: the snapshot, the fresh walk and the live
 * events are given): each case is one way a node can change while the connection is down, or
 * one way a read can race a live event.
 */
import { describe, expect, it } from 'vitest';
import type { Stat } from '../znode/stat';
import {
  applyChange,
  gapChanges,
  type LiveTrack,
  type NodeRecord,
  nextSnapshot,
  settleRead,
  UNKNOWN,
  UNREADABLE_RECORD,
} from './tree-snapshot';

const ROOT = '/r';
const BOUND = 100; // the last zxid the session saw before the gap

/** A record read from a Stat. */
const node = (czxid: number, version = 0, cversion = 0, mzxid = czxid + version): NodeRecord => ({
  czxid,
  mzxid,
  version,
  cversion,
});
/** A node created live: czxid unknown, its versions counted from 0. */
const bornLive = (version = 0, cversion = 0): NodeRecord => ({
  czxid: UNKNOWN,
  mzxid: UNKNOWN,
  version,
  cversion,
});
const tree = (entries: Record<string, NodeRecord>) => new Map(Object.entries(entries));
const live = (entries: Record<string, LiveTrack['first'][]>) =>
  new Map<string, LiveTrack>(
    Object.entries(entries).map(([path, types]) => [
      path,
      { first: types[0]!, lifecycle: types.some((type) => type !== 'changed') },
    ]),
  );
const none = live({});
const noOps = new Map<string, number>();
const stat = (czxid: number, version: number, cversion: number): Stat => ({
  czxid,
  mzxid: czxid + version,
  pzxid: czxid,
  ctime: 0,
  mtime: 0,
  version,
  cversion,
  aversion: 0,
  ephemeralOwner: '0',
  dataLength: 0,
  numChildren: 0,
});

describe('gapChanges', () => {
  it('reports nothing when nothing changed', () => {
    const before = tree({ '/r': node(1, 0, 1), '/r/a': node(2, 5) });
    const after = tree({ '/r': node(1, 0, 1), '/r/a': node(2, 5) });
    expect(gapChanges(ROOT, before, after, none, noOps, BOUND)).toEqual([]);
  });

  it('reports a creation, a deletion, a data change and a replacement (same path, new czxid)', () => {
    const before = tree({
      '/r': node(1, 0, 3),
      '/r/gone': node(2),
      '/r/set': node(3),
      '/r/again': node(4),
    });
    const fresh = tree({
      '/r': node(1, 0, 6),
      '/r/set': node(3, 1),
      '/r/again': node(110),
      '/r/new': node(105),
    });
    expect(gapChanges(ROOT, before, fresh, none, noOps, BOUND)).toEqual([
      { type: 'deleted', path: '/r/again' },
      { type: 'deleted', path: '/r/gone' },
      { type: 'created', path: '/r/again' },
      { type: 'created', path: '/r/new' },
      { type: 'changed', path: '/r/set' },
    ]);
  });

  it('deletes a subtree bottom-up and creates one top-down; the root itself too', () => {
    const before = tree({ '/r': node(1), '/r/a': node(2), '/r/a/b': node(3), '/r/c': node(4) });
    expect(gapChanges(ROOT, before, tree({}), none, noOps, BOUND)).toEqual([
      { type: 'deleted', path: '/r/a/b' },
      { type: 'deleted', path: '/r/a' },
      { type: 'deleted', path: '/r/c' },
      { type: 'deleted', path: '/r' },
    ]);
    const fresh = tree({ '/r': node(101), '/r/x': node(102), '/r/x/y': node(103) });
    expect(gapChanges(ROOT, tree({}), fresh, none, noOps, BOUND)).toEqual([
      { type: 'created', path: '/r' },
      { type: 'created', path: '/r/x' },
      { type: 'created', path: '/r/x/y' },
    ]);
  });

  it('tells data changes by the version counted from live events, whatever the zxids', () => {
    // Changed live twice (version counted 0 -> 2), the last time after the session's last
    // reply (mzxid 150 > bound): not changed during the gap.
    const before = tree({ '/r/a': { czxid: 2, mzxid: UNKNOWN, version: 2, cversion: 0 } });
    expect(
      gapChanges(ROOT, before, tree({ '/r/a': node(2, 2, 0, 150) }), none, noOps, BOUND),
    ).toEqual([]);
    expect(
      gapChanges(ROOT, before, tree({ '/r/a': node(2, 3, 0, 160) }), none, noOps, BOUND),
    ).toEqual([{ type: 'changed', path: '/r/a' }]);
  });

  it('judges a version a read raced (unknown) by its mzxid against the bound', () => {
    const before = tree({ '/r/a': { czxid: 2, mzxid: UNKNOWN, version: UNKNOWN, cversion: 0 } });
    expect(
      gapChanges(ROOT, before, tree({ '/r/a': node(2, 7, 0, 90) }), none, noOps, BOUND),
    ).toEqual([]);
    expect(
      gapChanges(ROOT, before, tree({ '/r/a': node(2, 8, 0, 120) }), none, noOps, BOUND),
    ).toEqual([{ type: 'changed', path: '/r/a' }]);
  });

  it('keeps a node created live when its parent accounts for every child created or deleted', () => {
    // /r/a was created live after the session's last reply (czxid 150 > bound): the same node,
    // since /r's cversion moved only by the new /r/b.
    const before = tree({ '/r': node(1, 0, 3), '/r/a': bornLive(1) });
    const fresh = tree({ '/r': node(1, 0, 4), '/r/a': node(150, 1), '/r/b': node(160) });
    expect(gapChanges(ROOT, before, fresh, none, noOps, BOUND)).toEqual([
      { type: 'created', path: '/r/b' },
    ]);
  });

  it('reports a node created live and replaced during the gap (its parent counts two more)', () => {
    const before = tree({ '/r': node(1, 0, 3), '/r/a': bornLive() });
    const fresh = tree({ '/r': node(1, 0, 5), '/r/a': node(150) });
    expect(gapChanges(ROOT, before, fresh, none, noOps, BOUND)).toEqual([
      { type: 'deleted', path: '/r/a' },
      { type: 'created', path: '/r/a' },
    ]);
    // The same, but created before the bound: the creation seen live is the one read.
    const older = tree({ '/r': node(1, 0, 5), '/r/a': node(90) });
    expect(gapChanges(ROOT, before, older, none, noOps, BOUND)).toEqual([]);
  });

  it('does not trust the cversion of a parent that is not the same node any more', () => {
    const before = tree({ '/r': node(1, 0, 1), '/r/p': node(2, 0, 1), '/r/p/a': bornLive() });
    // /r/p deleted and created again with one child named a: cversions match by chance.
    const fresh = tree({ '/r': node(1, 0, 3), '/r/p': node(140, 0, 1), '/r/p/a': node(141) });
    expect(gapChanges(ROOT, before, fresh, none, noOps, BOUND)).toEqual([
      { type: 'deleted', path: '/r/p/a' },
      { type: 'deleted', path: '/r/p' },
      { type: 'created', path: '/r/p' },
      { type: 'created', path: '/r/p/a' },
    ]);
  });

  it('leaves paths with live events since the watch came back to them, adding what they cannot say', () => {
    const before = tree({
      '/r': node(1, 0, 5),
      '/r/changed-both': node(2), // changed in the gap and live
      '/r/deleted-recreated-live': node(3), // deleted in the gap, created live
      '/r/replaced-then-changed-live': node(4), // replaced in the gap, changed live
      '/r/deleted-live': node(5),
    });
    const fresh = tree({
      '/r': node(1, 0, 11),
      '/r/changed-both': node(2, 2),
      '/r/deleted-recreated-live': node(150),
      '/r/replaced-then-changed-live': node(120, 1),
      '/r/created-live-seen': node(170),
      '/r/created-gap-changed-live': node(105, 1),
    });
    const during = live({
      '/r/changed-both': ['changed'],
      '/r/deleted-recreated-live': ['created'],
      '/r/replaced-then-changed-live': ['changed'],
      '/r/deleted-live': ['deleted'],
      '/r/created-live-seen': ['created'],
      '/r/created-gap-changed-live': ['changed'],
      '/r/created-gap-deleted-live': ['deleted'], // never read: created in the gap, gone since
    });
    expect(gapChanges(ROOT, before, fresh, during, noOps, BOUND)).toEqual([
      { type: 'deleted', path: '/r/deleted-recreated-live' },
      { type: 'deleted', path: '/r/replaced-then-changed-live' },
      { type: 'created', path: '/r/created-gap-changed-live' },
      { type: 'created', path: '/r/created-gap-deleted-live' },
      { type: 'created', path: '/r/replaced-then-changed-live' },
    ]);
  });

  it('takes the children created or deleted live off the parent cversion', () => {
    const before = tree({ '/r': node(1, 0, 3), '/r/a': bornLive() });
    // /r/b created live after the watch came back: /r's cversion 4 is 3 before it.
    const fresh = tree({ '/r': node(1, 0, 4), '/r/a': node(150), '/r/b': node(160) });
    const ops = new Map([['/r', 1]]);
    expect(gapChanges(ROOT, before, fresh, live({ '/r/b': ['created'] }), ops, BOUND)).toEqual([]);
  });

  it('says nothing of what is under a node it could not read', () => {
    const before = tree({ '/r': node(1), '/r/locked': node(2), '/r/locked/x': node(3) });
    const fresh = tree({ '/r': node(1), '/r/locked': UNREADABLE_RECORD });
    expect(gapChanges(ROOT, before, fresh, none, noOps, BOUND)).toEqual([]);
    expect([...nextSnapshot(ROOT, before, fresh)].sort()).toEqual([
      ['/r', node(1)],
      ['/r/locked', UNREADABLE_RECORD],
      ['/r/locked/x', node(3)],
    ]);
  });
});

describe('applyChange', () => {
  it('counts data versions and children, and knows a new node from nothing', () => {
    const records = tree({ '/r': node(1, 0, 2), '/r/a': node(2, 4) });
    applyChange(records, 'changed', '/r/a', true, ROOT);
    applyChange(records, 'created', '/r/b', true, ROOT);
    applyChange(records, 'changed', '/r/b', true, ROOT);
    applyChange(records, 'deleted', '/r/a', true, ROOT);
    applyChange(records, 'changed', '/r', true, ROOT); // the root's parent is not watched
    expect(records).toEqual(
      tree({
        '/r': { czxid: 1, mzxid: UNKNOWN, version: 1, cversion: 4 },
        '/r/b': { czxid: UNKNOWN, mzxid: UNKNOWN, version: 1, cversion: 0 },
      }),
    );
  });

  it('leaves an unreadable node and unknown counts as they are', () => {
    const records = tree({ '/r': UNREADABLE_RECORD, '/r/a': bornLive(UNKNOWN, UNKNOWN) });
    applyChange(records, 'created', '/r/x', true, ROOT);
    applyChange(records, 'changed', '/r', true, ROOT);
    applyChange(records, 'changed', '/r/a', true, ROOT);
    expect(records.get('/r')).toBe(UNREADABLE_RECORD);
    expect(records.get('/r/a')).toEqual(bornLive(UNKNOWN, UNKNOWN));
  });
});

describe('settleRead', () => {
  it('takes the Stat when no live event came while the read was in flight', () => {
    expect(settleRead(stat(5, 2, 3), { events: [], childOps: 0 })).toEqual(node(5, 2, 3));
    expect(settleRead(undefined, { events: [], childOps: 0 })).toBeUndefined();
  });

  it('forgets what a live event in flight may have changed before the read', () => {
    expect(settleRead(stat(5, 2, 3), { events: ['changed'], childOps: 0 })).toEqual({
      czxid: 5,
      mzxid: UNKNOWN,
      version: UNKNOWN,
      cversion: 3,
    });
    expect(settleRead(stat(5, 2, 3), { events: [], childOps: 1 })).toEqual({
      ...node(5, 2, 3),
      cversion: UNKNOWN,
    });
  });

  it('follows a node deleted or created again in flight, whatever the read saw', () => {
    expect(
      settleRead(stat(5, 2, 3), { events: ['changed', 'deleted'], childOps: 0 }),
    ).toBeUndefined();
    const recreated = { events: ['deleted', 'created', 'changed'] as const, childOps: 0 };
    const expected = { czxid: UNKNOWN, mzxid: UNKNOWN, version: 1, cversion: 0 };
    expect(settleRead(stat(5, 2, 3), { ...recreated, events: [...recreated.events] })).toEqual(
      expected,
    );
    expect(settleRead(undefined, { ...recreated, events: [...recreated.events] })).toEqual(
      expected,
    );
  });
});
