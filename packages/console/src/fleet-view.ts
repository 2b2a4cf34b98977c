/**
 * The `members` and `partitions` views of a fleet: its members and, for a partition, every
 * item's row (sent whole once, then only the rows of the items that changed: a move sends one
 * row, whatever the fleet's size), its poison items, balance and coordinator.
 */
import type { InspectedItem } from '@zkrx/fleet';
import type { FleetState } from './fleet-state';
import type { FleetChange, FleetWatch } from './fleet-watch';
import type { Hub } from './hub';

/**
 * One item as a page shows it: `[item, owner member (null: not a member's session), owner
 * session, fencing token, owned since (ms), waiting (member or 0x<session>, comma-separated)]`
 * — an array, so 10,000 items cost little to send (not the owner's node: its path is most of a
 * row's bytes, and the page shows none). A free item has nulls.
 */
export type ItemRow = readonly [
  string,
  string | null,
  string | null,
  number | null,
  number | null,
  string,
];

export function itemRow(item: InspectedItem): ItemRow {
  const owner = item.owner;
  const waiting = item.waiting.map((hold) => hold.member ?? `0x${hold.sessionId}`).join(', ');
  return [
    item.item,
    owner?.member ?? null,
    owner?.sessionId ?? null,
    owner?.fencingToken ?? null,
    owner?.createdAt ?? null,
    waiting,
  ];
}

/**
 * A row whose owner is not read yet: its name alone (the page makes it a row of nulls) — most of
 * a first look's 10,000 rows, which cost a third of the bytes so.
 */
function unreadRow(item: InspectedItem): string {
  return item.item;
}

function meta(state: FleetState | null | undefined, complete: boolean) {
  if (!state) return { found: state === null ? false : undefined };
  return {
    found: true,
    kind: state.kind,
    membersPath: state.membersPath,
    members: state.members.map((member) => ({
      id: member.id,
      sessionId: member.sessionId,
      data: member.data,
      joinedAt: member.joinedAt,
      items: state.ownedBy(member.id),
    })),
    itemCount: state.itemCount,
    owned: state.ownedCount,
    poisoned: state.poisoned.map((entry) => ({
      item: entry.item,
      node: entry.node,
      code: entry.code,
      member: entry.member,
      message: entry.message,
    })),
    coordinator: state.coordinator,
    // Not judged from a first look (most owners not read yet).
    balanced: complete ? state.balanced : undefined,
  };
}

/** What a fleet view is of. */
export interface FleetSpec {
  readonly view: 'members' | 'partitions';
  readonly path: string;
}

export class FleetView {
  private readonly release: () => void;
  private readonly stop: () => void;
  private sentWhole = false;
  private changed = new Set<string>();
  private whole = false;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(
    hub: Hub,
    private readonly spec: FleetSpec,
    private readonly send: (message: object) => void,
  ) {
    const { watch, release } = hub.holdFleet(spec.path);
    this.release = release;
    this.watch = watch;
    this.stop = watch.onChange((change) => this.onChange(change));
    if (watch.shown().state !== undefined) this.onChange({ whole: true, items: new Set() });
  }

  private readonly watch: FleetWatch;

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.stop();
    this.release();
  }

  private onChange(change: FleetChange): void {
    if (change.whole) this.whole = true;
    for (const item of change.items) this.changed.add(item);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      if (!this.closed) this.flush();
    });
  }

  private flush(): void {
    const { state, unread } = this.watch.shown();
    const base = {
      type: 'fleet',
      view: this.spec.view,
      path: this.spec.path,
      problem: this.watch.problem,
      ...meta(state, unread === undefined),
      /** False while only a first look is in: the owners of `unread` rows follow. */
      complete: unread === undefined,
    };
    if (!this.sentWhole || this.whole) {
      this.sentWhole = state !== undefined;
      this.whole = false;
      this.changed.clear();
      const items = state ? [...state.items()] : [];
      this.send({
        ...base,
        reset: true,
        items: items.map((item) => (unread?.has(item.item) ? unreadRow(item) : itemRow(item))),
      });
      return;
    }
    const changed = this.changed;
    this.changed = new Set();
    const rows: ItemRow[] = [];
    const removed: string[] = [];
    for (const name of changed) {
      const item = state?.item(name);
      if (item) rows.push(itemRow(item));
      else removed.push(name);
    }
    this.send({ ...base, reset: false, items: rows, removed });
  }
}
