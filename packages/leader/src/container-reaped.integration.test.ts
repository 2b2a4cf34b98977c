/**
 * The election path is a container: ZooKeeper deletes it once idle, and a new one made later
 * numbers its children from 0 again. A candidate that led there alone before must not lead
 * beside the one that leads now.
 */
import type { ZkClient } from '@zkrx/core';
import {
  childrenOf,
  lockPath,
  reapingClients,
  reapingZooKeeper,
  untilGone,
  untilWatching,
} from '@zkrx/test-support';
import { BehaviorSubject, filter, firstValueFrom, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { joinElection, leadership, whileLeader } from './index';

/** The only node at `path` (the leader's, when one candidate stands). */
async function onlyNode(client: ZkClient, path: string): Promise<string> {
  const children = await childrenOf(client, path);
  expect(children).toHaveLength(1);
  return `${path}/${children[0]}`;
}

/** Follows an observable of booleans: the latest value, and a promise of the first `true`. */
function follow(source: { subscribe(next: (value: boolean) => void): { unsubscribe(): void } }) {
  const state = new BehaviorSubject(false);
  const subscription = source.subscribe((value) => state.next(value));
  return {
    get leading() {
      return state.value;
    },
    elected: firstValueFrom(state.pipe(filter(Boolean))),
    stop: () => subscription.unsubscribe(),
  };
}

describe('an idle election path reaped between two terms, then the other candidate first', () => {
  it('leadership: the earlier leader does not lead beside the new one', async () => {
    const server = await reapingZooKeeper();
    const [a, b] = await reapingClients(2);
    const path = lockPath('election');
    const first = follow(leadership(a!, path, { id: 'a' }));
    await first.elected;
    first.stop();
    await untilGone(a!, path);
    const other = follow(leadership(b!, path, { id: 'b' }));
    await other.elected;
    const leader = await onlyNode(b!, path);
    const again = follow(leadership(a!, path, { id: 'a' }));
    await untilWatching(server, a!, leader, again.elected);
    expect(again.leading && other.leading).toBe(false);
    other.stop();
    await again.elected;
    again.stop();
  });

  it('joinElection: the earlier leader does not lead beside the new one', async () => {
    const server = await reapingZooKeeper();
    const [a, b] = await reapingClients(2);
    const path = lockPath('election');
    const first = joinElection(a!, path, { id: 'a' });
    await first.joined;
    await first.whenLeader();
    await first.leave();
    await untilGone(a!, path);
    const other = joinElection(b!, path, { id: 'b' });
    await other.joined;
    await other.whenLeader();
    const leader = await onlyNode(b!, path);
    const again = joinElection(a!, path, { id: 'a' });
    await again.joined;
    await untilWatching(server, a!, leader, again.whenLeader());
    expect(again.isLeader && other.isLeader).toBe(false);
    await other.leave();
    await again.whenLeader();
    await again.leave();
  });

  it('whileLeader: the earlier leader does not run its work beside the new one', async () => {
    const server = await reapingZooKeeper();
    const [a, b] = await reapingClients(2);
    const path = lockPath('election');
    const running = { a: new BehaviorSubject(false), b: new BehaviorSubject(false) };
    const work = (who: 'a' | 'b', done?: Subject<void>) => () => {
      running[who].next(true);
      return done ?? new Subject<void>();
    };
    // a leads alone, its work completes, and it does not queue again.
    const finished = new Subject<void>();
    const alone = whileLeader(a!, path, work('a', finished), { id: 'a', requeue: false });
    const ended = new Promise<void>((resolve) => alone.subscribe({ complete: resolve }));
    await firstValueFrom(running.a.pipe(filter(Boolean)));
    running.a.next(false);
    finished.complete();
    await ended;
    await untilGone(a!, path);
    const other = whileLeader(b!, path, work('b'), { id: 'b' }).subscribe();
    await firstValueFrom(running.b.pipe(filter(Boolean)));
    const leader = await onlyNode(b!, path);
    const again = whileLeader(a!, path, work('a'), { id: 'a' }).subscribe();
    await untilWatching(server, a!, leader, firstValueFrom(running.a.pipe(filter(Boolean))));
    expect(running.a.value).toBe(false);
    other.unsubscribe();
    await firstValueFrom(running.a.pipe(filter(Boolean)));
    again.unsubscribe();
  });
});
