/**
 * The `sessions` view: one ZooKeeper session's everything the console watches — the locks it
 * holds and waits for, the elections it leads or stands in, the fleets it is a member of and the
 * items it owns or waits for, its owner data — and whether it is alive. ZooKeeper tells no
 * client which nodes another session owns: the console looks in what it watches (every view
 * open, plus the scopes the link carries).
 */

import { type FleetSpec, FleetView } from './fleet-view';
import type { Hub } from './hub';
import { PathLocksView, shownIn } from './lock-view';
import type { PathViewSpec } from './view-spec';

interface Closable {
  close(): void;
}

export class SessionView {
  private readonly scopes: Closable[];
  private readonly stops: (() => void)[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  /** The session was seen with nodes while this page was open. */
  private seen = false;

  constructor(
    private readonly hub: Hub,
    private readonly id: string,
    scopes: readonly PathViewSpec[],
    private readonly send: (message: object) => void,
  ) {
    // The scopes' own views keep their paths watched; their messages are not this page's.
    const quiet = () => this.schedule();
    this.scopes = scopes.map((scope) =>
      scope.view === 'locks' || scope.view === 'leaders'
        ? new PathLocksView(hub, scope, quiet)
        : new FleetView(hub, scope as FleetSpec, quiet),
    );
    this.stops.push(hub.book.onChange(() => this.schedule()));
    this.stops.push(hub.history.onChange(() => this.schedule()));
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    for (const stop of this.stops) stop();
    for (const scope of this.scopes) scope.close();
  }

  private schedule(): void {
    if (this.closed) return;
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      if (!this.closed) this.send(this.message());
    });
  }

  private message(): object {
    const { id, hub } = this;
    const holds: object[] = [];
    const waits: object[] = [];
    const data = new Set<string>();
    for (const lock of hub.book.locks()) {
      for (const holder of lock.holders) {
        if (holder.sessionId !== id) continue;
        data.add(holder.data);
        holds.push({
          path: lock.path,
          kind: lock.kind,
          leads: shownIn('leaders', lock.kind) && lock.kind === 'election',
          mode: holder.mode,
          node: holder.node,
          data: holder.data,
          createdAt: holder.createdAt,
          heldSince: hub.book.heldSince(holder.node),
          token: holder.czxid,
        });
      }
      lock.waiters.forEach((waiter, index) => {
        if (waiter.sessionId !== id) return;
        data.add(waiter.data);
        waits.push({
          path: lock.path,
          kind: lock.kind,
          place: index + 1,
          mode: waiter.mode,
          node: waiter.node,
          data: waiter.data,
          createdAt: waiter.createdAt,
        });
      });
    }
    const members: object[] = [];
    const owns: object[] = [];
    const waitsFor: object[] = [];
    for (const watch of hub.watchedFleets()) {
      const fleet = watch.state;
      if (!fleet) continue;
      for (const member of fleet.members) {
        if (member.sessionId !== id) continue;
        data.add(member.data);
        members.push({
          path: fleet.path,
          kind: fleet.kind,
          id: member.id,
          data: member.data,
          joinedAt: member.joinedAt,
        });
      }
      for (const item of fleet.items()) {
        if (item.owner?.sessionId === id) {
          owns.push({
            path: fleet.path,
            item: item.item,
            token: item.owner.fencingToken,
            createdAt: item.owner.createdAt,
            node: item.owner.node,
          });
        }
        if (item.waiting.some((hold) => hold.sessionId === id))
          waitsFor.push({ path: fleet.path, item: item.item });
      }
    }
    const present =
      holds.length + waits.length + members.length + owns.length + waitsFor.length > 0;
    if (present) this.seen = true;
    const lost = hub.history
      .list()
      .filter((entry) => entry.scope === 'lock' && entry.lost && entry.from === id);
    const state = present ? 'alive' : lost.length > 0 ? 'ended' : this.seen ? 'gone' : 'not-seen';
    return {
      type: 'session',
      id,
      state,
      lostAt: lost.at(-1)?.at,
      data: [...data].filter((text) => text !== ''),
      holds,
      waits,
      members,
      owns,
      waitsFor,
      history: hub.history
        .list()
        .filter((entry) => entry.from === id || entry.to === id)
        .slice(-50),
      watched: hub.counts(),
    };
  }
}

export class HistoryView {
  private readonly stop: () => void;
  private last = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(
    private readonly hub: Hub,
    private readonly send: (message: object) => void,
  ) {
    this.stop = hub.history.onChange(() => this.schedule());
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.stop();
  }

  private schedule(): void {
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      if (this.closed) return;
      const reset = this.last === 0;
      const entries = this.hub.history.list(this.last);
      this.last = entries.at(-1)?.id ?? this.last;
      this.send({ type: 'history', reset, entries, watched: this.hub.counts() });
    });
  }
}
