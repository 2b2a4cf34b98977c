/**
 * What `zkrx partitions` draws from an inspected fleet, and the changes its live view lists
 * between two reads, on fleets made by hand.
 */

import { fleetEvents } from '@zkrx/console';
import type { InspectedFleet, InspectedHold, InspectedItem } from '@zkrx/fleet';
import { describe, expect, it } from 'vitest';
import { fleetEventLine, renderPartitions } from './fleet';
import { noColours } from './format';

const hold = (member: string | undefined, sessionId: string, token: number): InspectedHold => ({
  member,
  sessionId,
  node: `/f/items/x/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-${String(token).padStart(10, '0')}`,
  data: member ?? 'tool',
  fencingToken: token,
  createdAt: 1_000,
});

const item = (
  name: string,
  owner?: InspectedHold,
  waiting: InspectedHold[] = [],
): InspectedItem => ({
  item: name,
  path: `/f/items/${name}`,
  owner,
  waiting,
});

function fleet(items: InspectedItem[], ids = ['a', 'b']): InspectedFleet {
  return {
    path: '/f',
    kind: 'partition',
    membersPath: '/f/members',
    members: ids.map((id, index) => ({
      id,
      data: '',
      sessionId: `s${id}`,
      joinedAt: 0,
      czxid: index + 1,
      ownSession: false,
      items: items.filter((found) => found.owner?.member === id).map((found) => found.item),
      problems: [],
      itemSet: undefined,
    })),
    items,
    poisoned: [],
    poisonedUnlisted: 0,
    coordinator: undefined,
    balanced: false,
    readAt: 0,
  };
}

describe('zkrx partitions', () => {
  it('draws owners, free items, owners outside the fleet and who waits', () => {
    const lines = renderPartitions(
      fleet([
        item('x', hold('a', 'sa', 7), [hold('b', 'sb', 9)]),
        item('y'),
        item('z', hold(undefined, 'ff', 8)),
      ]),
      { command: 'partitions', now: 3_500, paint: noColours },
    );
    expect(lines).toEqual([
      '/f  partition · 2 members · 3 items (2 owned) · not balanced',
      '  ITEM  OWNER                TOKEN  SESSION  SINCE       WAITING',
      '  x     a                    7      0xsa     held ≤2.5s  b',
      '  y     free                 -      -        -           -',
      '  z     not a member (tool)  8      0xff     held ≤2.5s  -',
      '  owned: a 1 · b 0',
      '  coordinator: none (no member holds /f/coordinator: nothing new is taken)',
    ]);
  });

  it('shows what members go through: their failures to stay in, and problems they ride out', () => {
    const view = fleet([item('a', hold('a', 'sa', 7))]);
    const lines = renderPartitions(
      {
        ...view,
        coordinator: 'a',
        members: view.members.map((member) =>
          member.id !== 'b'
            ? member
            : {
                ...member,
                problems: [
                  { task: 'join', code: 'ReleaseTimeout', message: 'runs', at: 500, count: 3 },
                  { task: 'report-poison', code: 'NoAuth', message: 'no', at: 1_500, count: 2 },
                ],
              },
        ),
      },
      { command: 'partitions', now: 3_500, paint: noColours },
    );
    expect(lines.slice(-2)).toEqual([
      '  problem: b: joined again after 3 failures in a row, last 3.0s ago: runs',
      '  problem: b: report-poison ×2, last 2.0s ago: no',
    ]);
  });

  it('shows the item sets the members state when they differ (a rolling deploy)', () => {
    const view = fleet([item('a', hold('a', 'sa', 7))], ['a', 'b', 'c']);
    const lines = renderPartitions(
      {
        ...view,
        coordinator: 'a',
        members: view.members.map((member) => ({
          ...member,
          itemSet:
            member.id === 'c'
              ? { digest: 'NEWSET0123456789', size: 31 }
              : { digest: 'OLDSET0123456789', size: 30 },
        })),
      },
      { command: 'partitions', now: 3_500, paint: noColours },
    );
    expect(lines.slice(-2)).toEqual([
      '  item set: OLDSET01 (30 items): a, b',
      '  item set: NEWSET01 (31 items): c',
    ]);
  });

  it('shows poison items, with or without a lock path, and the coordinator', () => {
    const view: InspectedFleet = {
      ...fleet([item('a', hold('a', 'sa', 7)), item('bad')]),
      coordinator: 'a',
      poisoned: [
        { item: 'bad', member: 'a', code: 'NoAuth', message: 'no access', node: '/f/poison/bad' },
        {
          item: 'c',
          member: 'b',
          code: 'LockConflict',
          message: 'a read lock',
          node: '/f/poison/c',
        },
      ],
    };
    expect(renderPartitions(view, { command: 'partitions', now: 3_500, paint: noColours })).toEqual(
      [
        '/f  partition · 2 members · 2 items (1 owned) · 2 poison · not balanced',
        '  ITEM  OWNER                     TOKEN  SESSION  SINCE       WAITING',
        '  a     a                         7      0xsa     held ≤2.5s  -',
        '  bad   poison: NoAuth (a)        -      -        -           -',
        '  c     poison: LockConflict (b)  -      -        -           -',
        '  owned: a 1 · b 0',
        '  coordinator: a',
        '  poison: bad: no access (delete /f/poison/bad to try it again)',
        '  poison: c: a read lock (delete /f/poison/c to try it again)',
      ],
    );
  });

  it('lists joins, leaves, items taken, moved and freed between two reads', () => {
    const before = fleet([item('x', hold('a', 'sa', 7)), item('y', hold('a', 'sa', 8)), item('z')]);
    const after = fleet(
      [
        item('x', hold('a', 'sa', 7)),
        item('y', hold('c', 'sc', 11)),
        item('z', hold('c', 'sc', 12)),
      ],
      ['a', 'c'],
    );
    const events = fleetEvents(before, after, 5);
    expect(events).toEqual([
      { kind: 'left', at: 5, member: 'b' },
      { kind: 'joined', at: 5, member: 'c' },
      { kind: 'moved', at: 5, item: 'y', from: 'a', to: 'c', token: 11 },
      { kind: 'taken', at: 5, item: 'z', to: 'c', token: 12 },
    ]);
    expect(events.map((event) => fleetEventLine(event, () => 'T'))).toEqual([
      'T  b left',
      'T  c joined',
      'T  y moved: a → c (token 11)',
      'T  z taken by c (token 12)',
    ]);
    expect(fleetEvents(after, fleet([item('x', hold('a', 'sa', 7))], ['a', 'c']), 6)).toEqual([
      { kind: 'freed', at: 6, item: 'y', from: 'c' },
      { kind: 'freed', at: 6, item: 'z', from: 'c' },
    ]);
    // The first read has nothing to compare with.
    expect(fleetEvents(undefined, after, 7)).toEqual([]);
  });
});
