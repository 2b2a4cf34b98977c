/**
 * The `members` and `partitions` views of a fleet: its members and, for a partition, every
 * item's row (sent whole once, then only the rows of the items that changed: a move sends one
 * row, whatever the fleet's size), its poison items, balance and coordinator.
 */
import type { InspectedFleet, InspectedItem } from '@zkrx/fleet';
import type { FleetChange } from './fleet-watch';
import type { Hub } from './hub';

/**
 * One item as a page shows it: `[item, owner member (null: not a member's session), owner
 * session, fencing token, owned since (ms), waiting (member or 0x<session>, comma-separated),
 * owner's node]` — an array, so 10,000 items cost little to send. A free item has nulls.
 */
export type ItemRow = readonly [
  string,
  string | null,
  string | null,
  number | null,
  number | null,
  string,
  string | null,
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
    owner?.node ?? null,
  ];
}

/** A row whose owner is not read yet: `[item, …nulls, '', null, true]`. */
function unreadRow(item: InspectedItem): readonly unknown[] {
  return [item.item, null, null, null, null, '', null, true];
}

function meta(fleet: InspectedFleet | null | undefined) {
  if (!fleet) return { found: fleet === null ? false : undefined };
  return {
    found: true,
    kind: fleet.kind,
    membersPath: fleet.membersPath,
    members: fleet.members.map((member) => ({
      id: member.id,
      sessionId: member.sessionId,
      data: member.data,
      joinedAt: member.joinedAt,
      items: member.items.length,
    })),
    itemCount: fleet.items.length,
    owned: fleet.items.filter((item) => item.owner !== undefined).length,
    poisoned: fleet.poisoned.map((entry) => ({
      item: entry.item,
      node: entry.node,
      code: entry.code,
      member: entry.member,
      message: entry.message,
    })),
    coordinator: fleet.coordinator,
    balanced: fleet.balanced,
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
    const seen = (change: FleetChange) =>
      this.onChange(
        change,
        watch.fleet ?? watch.first?.fleet,
        watch.problem,
        watch.fleet === undefined ? watch.first?.unread : undefined,
      );
    this.stop = watch.onChange(seen);
    if (watch.fleet !== undefined || watch.first) seen({ whole: true, items: new Set() });
  }

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.stop();
    this.release();
  }

  private latest: {
    fleet: InspectedFleet | null | undefined;
    problem: string | undefined;
    /** A first look's items whose owner is not read yet (none once the fleet is read whole). */
    unread: ReadonlySet<string> | undefined;
  } = { fleet: undefined, problem: undefined, unread: undefined };

  private onChange(
    change: FleetChange,
    fleet: InspectedFleet | null | undefined,
    problem: string | undefined,
    unread: ReadonlySet<string> | undefined,
  ): void {
    this.latest = { fleet, problem, unread };
    if (change.whole) this.whole = true;
    for (const item of change.items) this.changed.add(item);
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      if (!this.closed) this.flush();
    });
  }

  private flush(): void {
    const { fleet, problem, unread } = this.latest;
    const base = {
      type: 'fleet',
      view: this.spec.view,
      path: this.spec.path,
      problem,
      ...meta(fleet),
      /** False while only a first look is in: the owners of `unread` rows follow. */
      complete: unread === undefined,
    };
    if (!this.sentWhole || this.whole) {
      this.sentWhole = fleet !== undefined;
      this.whole = false;
      this.changed.clear();
      this.send({
        ...base,
        reset: true,
        items: (fleet?.items ?? []).map((item) =>
          unread?.has(item.item) ? unreadRow(item) : itemRow(item),
        ),
      });
      return;
    }
    const changed = this.changed;
    this.changed = new Set();
    const rows: ItemRow[] = [];
    const removed: string[] = [];
    const byName = new Map(
      (fleet?.items ?? [])
        .filter((item) => changed.has(item.item))
        .map((item) => [item.item, item]),
    );
    for (const name of changed) {
      const item = byName.get(name);
      if (item) rows.push(itemRow(item));
      else removed.push(name);
    }
    this.send({ ...base, reset: false, items: rows, removed });
  }
}
