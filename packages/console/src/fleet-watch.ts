/**
 * One fleet kept live (a @zkrx/fleet partition or membership group): one persistent recursive
 * watch on its path, put in place first and reading nothing of the tree itself (`snapshot:
 * false`); a first look at once (the members, the items' names, the first owners: the first
 * screen), then `inspectFleet` read whole once the watch is in place, after each gap and when
 * a poison report comes or goes or the coordinator changes; the members alone when one joins,
 * leaves or writes its node; an item's lock alone read again
 * (`inspect`) when a change is under it, and applied to the kept fleet (`FleetState`) — so a
 * move costs a read of one item and the work of one row, not of 10,000.
 */
import { joinPath, type ZkClient } from '@zkrx/core';
import {
  type InspectedFleet,
  type InspectedItem,
  type InspectedMember,
  inspectFleet,
} from '@zkrx/fleet';
import { type InspectedParticipant, inspect } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoalescedRead } from './coalesced-read';
import { type FleetEvent, fleetEvents, itemEvents } from './fleet-events';
import { firstLook, readMembers } from './fleet-first-look';
import { holdsOf } from './fleet-holds';
import { FleetState } from './fleet-state';
import type { History } from './history';

/** Whole reads in a row thrown away as torn before one is used anyway. */
const MAX_TORN_READS = 3;
/** Item locks read at once. */
const ITEM_READS = 32;

/** What changed in one step, for the pages showing the fleet. */
export interface FleetChange {
  /** The whole fleet was read again: every item may have changed. */
  readonly whole: boolean;
  /** The items read again (when not `whole`). */
  readonly items: ReadonlySet<string>;
}

export class FleetWatch {
  /** The fleet as kept; undefined before the first whole read; null: nothing there. */
  state: FleetState | null | undefined;
  /** Before the first whole read: a first look at it, if it came first. */
  private first: { readonly state: FleetState; readonly unread: ReadonlySet<string> } | undefined;
  problem: string | undefined;
  private readonly whole: CoalescedRead<InspectedFleet | null>;
  private readonly members: CoalescedRead<InspectedMember[]>;
  private readonly watch: Subscription;
  /** The first look is done (the whole read waits for it: it would slow the first screen). */
  private looked = false;
  private wholeAsked = false;
  private readonly listeners = new Set<(change: FleetChange) => void>();
  private readonly dirty = new Set<string>();
  private readonly reading = new Set<string>();
  private readonly again = new Set<string>();
  /** Items notified while a whole read was in flight: read again once it is taken. */
  private readonly afterWhole = new Set<string>();
  private readonly patched = new Map<string, InspectedItem | null>();
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly itemsPath: string;

  constructor(
    private readonly client: ZkClient,
    readonly path: string,
    private readonly history: History,
  ) {
    this.itemsPath = joinPath(path, 'items');
    this.members = new CoalescedRead(() => readMembers(client, joinPath(path, 'members')), {
      take: (members) => this.takeMembers(members),
      fail: () => {},
    });
    this.whole = new CoalescedRead(
      () => inspectFleet(client, path),
      {
        take: (fleet) => this.takeWhole(fleet),
        fail: (error) => {
          this.problem = `could not read ${path}: ${(error as Error).message}`;
          this.emit({ whole: false, items: new Set() });
        },
      },
      // A torn read (a change notified during it) is read again, unless changes never stop.
      { maxTornReads: MAX_TORN_READS },
    );
    // The watch first: every change after its `resync` is told, so the whole read it asks for
    // misses nothing; it reads nothing of the tree (the fleet's 20,000 nodes are not walked).
    this.watch = client.watchTree(path, { snapshot: false }).subscribe({
      next: (event) => {
        if (event.type === 'resync') this.readWhole();
        else this.onTreeChange(event.path);
      },
      error: (error: unknown) => {
        this.problem = `watching ${path} failed: ${(error as Error).message}`;
        this.emit({ whole: false, items: new Set() });
        this.readWhole();
      },
    });
    // A first look (the members, the items' names, the first items' owners: a few hundred
    // milliseconds), then the whole read, which does not compete with it for the session.
    firstLook(client, path)
      .then(
        (look) => {
          if (this.state !== undefined || this.closed || !look) return;
          this.first = { state: new FleetState(look.fleet), unread: look.unread };
          this.emit({ whole: true, items: new Set() });
        },
        () => {},
      )
      .finally(() => {
        this.looked = true;
        if (this.wholeAsked) this.whole.request();
      });
  }

  /** The fleet as `inspectFleet` gives it (O(items): for the views that need all of it). */
  get fleet(): InspectedFleet | null | undefined {
    return this.state === undefined || this.state === null ? this.state : this.state.toFleet();
  }

  /**
   * What a page shows now: the fleet as kept or, before its first whole read, as the first look
   * found it — with `unread`, the items whose owner is not read yet.
   */
  shown(): { state: FleetState | null | undefined; unread: ReadonlySet<string> | undefined } {
    if (this.state !== undefined || !this.first) return { state: this.state, unread: undefined };
    return this.first;
  }

  /** Calls `listener` after each change; returns a function that stops it. */
  onChange(listener: (change: FleetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    this.whole.close();
    this.members.close();
    this.watch.unsubscribe();
    if (this.scheduled) clearImmediate(this.scheduled);
    this.listeners.clear();
  }

  private readWhole(): void {
    this.wholeAsked = true;
    if (this.looked) this.whole.request();
  }

  private onTreeChange(path: string): void {
    const prefix = `${this.itemsPath}/`;
    const item = path.startsWith(prefix) ? path.slice(prefix.length).split('/')[0] : undefined;
    const state = this.state;
    // A member's share written, a set stored: nothing inspectFleet shows (the moves that follow
    // are changes under items).
    if (
      state?.kind === 'partition' &&
      (path.startsWith(`${this.path}/assignments/`) || path.startsWith(`${this.path}/sets/`))
    ) {
      return;
    }
    // A member joined, left or wrote its node (a problem, another set): the members alone are
    // read again (a read per member; the holds named again from them, the balance counted
    // again) — not the whole fleet, whose 20,000 reads on this session would hold every move
    // back behind them for seconds. The items it takes or gives up are changes under items.
    if (state?.kind === 'partition' && path.startsWith(`${state.membersPath}/`)) {
      this.members.request();
      return;
    }
    if (item === undefined || !state || state.kind !== 'partition') {
      // Anything else (the coordinator, poison reports, the fleet made or removed): read whole.
      this.readWhole();
      return;
    }
    if (this.whole.busy) this.afterWhole.add(item);
    if (this.reading.has(item)) this.again.add(item);
    else this.dirty.add(item);
    this.pump();
  }

  /**
   * Starts item reads, ITEM_READS at a time. They go on while the whole fleet is read (a move
   * shows without waiting for a read of 10,000 items); an item notified during a whole read is
   * read again after it, since the whole read may have read it before the change.
   */
  private pump(): void {
    if (this.closed) return;
    for (const item of this.dirty) {
      if (this.reading.size >= ITEM_READS) break;
      this.dirty.delete(item);
      this.reading.add(item);
      void this.readItem(item);
    }
  }

  private async readItem(item: string): Promise<void> {
    const path = joinPath(this.itemsPath, item);
    let read: InspectedItem | null | undefined;
    try {
      const lock = await inspect(this.client, path);
      const exists = lock !== null || (await this.client.promises.exists(path)) !== null;
      read = exists ? this.itemOf(item, path, lock?.holders[0], lock?.waiters ?? []) : null;
    } catch (error) {
      this.problem = `could not read ${path}: ${(error as Error).message}`;
    }
    this.reading.delete(item);
    if (this.closed) return;
    if (this.again.delete(item) || read === undefined) this.dirty.add(item);
    else this.patched.set(item, read);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.applyPatches();
    });
    this.pump();
  }

  private itemOf(
    item: string,
    path: string,
    holder: InspectedParticipant | undefined,
    waiters: readonly InspectedParticipant[],
  ): InspectedItem {
    const bySession = new Map(
      (this.state?.members ?? []).map((member) => [member.sessionId, member.id]),
    );
    return { item, path, ...holdsOf(bySession, holder, waiters) };
  }

  private takeWhole(fleet: InspectedFleet | null): void {
    const events = fleetEvents(this.fleet, fleet, Date.now());
    this.state = fleet && new FleetState(fleet);
    this.first = undefined;
    this.problem = undefined;
    this.patched.clear();
    for (const item of this.afterWhole) this.dirty.add(item);
    this.afterWhole.clear();
    this.record(events);
    this.emit({ whole: true, items: new Set() });
    this.pump();
  }

  /** Members read again: the owners named by them again, the join or leave recorded. */
  private takeMembers(members: InspectedMember[]): void {
    const state = this.state;
    if (state?.kind !== 'partition') return;
    const before = { ...state.toFleet(), items: [] };
    state.setMembers(members);
    this.record(fleetEvents(before, { ...before, members, items: [] }, Date.now()));
    this.emit({ whole: true, items: new Set() });
  }

  /** The item reads done since the last step, applied to the fleet at once. */
  private applyPatches(): void {
    const state = this.state;
    if (!state || this.patched.size === 0) return;
    const patches = new Map(this.patched);
    this.patched.clear();
    const before: InspectedItem[] = [];
    const after: InspectedItem[] = [];
    for (const [name, read] of patches) {
      const was = state.item(name);
      if (was) before.push(was);
      if (read) after.push(read);
      state.set(name, read ?? undefined);
    }
    this.record(itemEvents(before, after, Date.now()));
    this.emit({ whole: false, items: new Set(patches.keys()) });
  }

  private record(events: readonly FleetEvent[]): void {
    this.history.add(
      events.map((event) =>
        'member' in event
          ? { at: event.at, scope: 'fleet', kind: event.kind, path: this.path, item: event.member }
          : {
              at: event.at,
              scope: 'fleet',
              kind: event.kind,
              path: this.path,
              item: event.item,
              from: event.from,
              to: event.to,
              token: event.token,
            },
      ),
    );
  }

  private emit(change: FleetChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
