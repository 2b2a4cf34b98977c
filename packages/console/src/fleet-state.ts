/**
 * A fleet as the console keeps it between reads: its items by name (sorted names kept beside
 * them), each member's count of owned items and the balance kept as items change — so a move
 * costs the console the work of one item, not a walk of 10,000 — and the rest (members, poison
 * items, the coordinator) as the last read of the whole fleet left them.
 */
import type { InspectedFleet, InspectedHold, InspectedItem, InspectedMember } from '@zkrx/fleet';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where `name` is, or would go, in the sorted `names`. */
function place(names: readonly string[], name: string): number {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(names[middle] as string, name) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class FleetState {
  private readonly byName = new Map<string, InspectedItem>();
  private readonly names: string[] = [];
  /** Owned items per member id. */
  private readonly owned = new Map<string, number>();
  private held = 0;
  /** Owned items whose owner is no member's session. */
  private ownedByOthers = 0;
  private fleet: InspectedFleet;

  /** The fleet of a whole read (its items taken over). */
  constructor(fleet: InspectedFleet) {
    this.fleet = { ...fleet, items: [] };
    for (const item of fleet.items) this.set(item.item, item);
  }

  get path(): string {
    return this.fleet.path;
  }

  get kind(): InspectedFleet['kind'] {
    return this.fleet.kind;
  }

  get membersPath(): string {
    return this.fleet.membersPath;
  }

  /** The members in join order (their `items` as the last whole read found them). */
  get members(): readonly InspectedMember[] {
    return this.fleet.members;
  }

  get poisoned(): InspectedFleet['poisoned'] {
    return this.fleet.poisoned;
  }

  get coordinator(): string | undefined {
    return this.fleet.coordinator;
  }

  get itemCount(): number {
    return this.names.length;
  }

  get ownedCount(): number {
    return this.held;
  }

  /** How many items `member` owns now. */
  ownedBy(member: string): number {
    return this.owned.get(member) ?? 0;
  }

  /**
   * Every member owns ⌊k/m⌋ or ⌈k/m⌉ of the k owned items, each owned by a member (as
   * `inspectFleet` judges it); undefined without members or for a plain membership.
   */
  get balanced(): boolean | undefined {
    const members = this.fleet.members;
    if (this.fleet.kind !== 'partition' || members.length === 0) return undefined;
    const low = Math.floor(this.held / members.length);
    const high = Math.ceil(this.held / members.length);
    return (
      this.ownedByOthers === 0 &&
      members.every((member) => {
        const count = this.ownedBy(member.id);
        return count >= low && count <= high;
      })
    );
  }

  item(name: string): InspectedItem | undefined {
    return this.byName.get(name);
  }

  /** The items, sorted by name. */
  *items(): IterableIterator<InspectedItem> {
    for (const name of this.names) yield this.byName.get(name) as InspectedItem;
  }

  /** An item read again (`undefined`: it has no lock path any more). */
  set(name: string, item: InspectedItem | undefined): void {
    const before = this.byName.get(name);
    if (before) this.count(before.owner, -1);
    if (!item) {
      if (!before) return;
      this.byName.delete(name);
      this.names.splice(place(this.names, name), 1);
      return;
    }
    if (!before) this.names.splice(place(this.names, name), 0, name);
    this.byName.set(name, item);
    this.count(item.owner, 1);
  }

  /**
   * The members read again: their ids name the holds again (a hold's member is the member with
   * its session) — the one change that touches every item.
   */
  setMembers(members: readonly InspectedMember[]): void {
    const bySession = new Map(members.map((member) => [member.sessionId, member.id]));
    const named = (hold: InspectedHold): InspectedHold => ({
      ...hold,
      member: bySession.get(hold.sessionId),
    });
    this.fleet = { ...this.fleet, members };
    this.owned.clear();
    this.held = 0;
    this.ownedByOthers = 0;
    for (const [name, item] of this.byName) {
      const next = {
        ...item,
        owner: item.owner && named(item.owner),
        waiting: item.waiting.map(named),
      };
      this.byName.set(name, next);
      this.count(next.owner, 1);
    }
  }

  /** The fleet as `inspectFleet` gives it (each member's items listed): O(items), for a whole view. */
  toFleet(): InspectedFleet {
    const lists = new Map<string, string[]>();
    const items = [...this.items()];
    for (const item of items) {
      const member = item.owner?.member;
      if (member === undefined) continue;
      const list = lists.get(member);
      if (list) list.push(item.item);
      else lists.set(member, [item.item]);
    }
    return {
      ...this.fleet,
      members: this.fleet.members.map((member) => ({
        ...member,
        items: lists.get(member.id) ?? [],
      })),
      items,
      balanced: this.balanced,
    };
  }

  private count(owner: InspectedHold | undefined, by: 1 | -1): void {
    if (!owner) return;
    this.held += by;
    if (owner.member === undefined) this.ownedByOthers += by;
    else this.owned.set(owner.member, (this.owned.get(owner.member) ?? 0) + by);
  }
}
