/**
 * The changes between two reads of a fleet (members joined and left, items taken, moved,
 * freed): what the console's fleet views and `zkrx members|partitions --watch` list.
 */
import type { InspectedFleet, InspectedHold, InspectedItem } from '@zkrx/fleet';

/** A change between two reads of a fleet. */
export type FleetEvent =
  | { readonly kind: 'joined' | 'left'; readonly at: number; readonly member: string }
  | {
      readonly kind: 'taken' | 'moved' | 'freed';
      readonly at: number;
      readonly item: string;
      /** The owner before (member id, or the session of a non-member). */
      readonly from?: string;
      readonly to?: string;
      readonly token?: number;
    };

/** A hold's owner as the views name it: its member id, else `0x<session>`. */
export function ownerName(hold: InspectedHold | undefined): string | undefined {
  if (!hold) return undefined;
  return hold.member ?? `0x${hold.sessionId}`;
}

/** The changes from `before` to `after` (members joined and left, items taken, moved, freed). */
export function fleetEvents(
  before: InspectedFleet | null | undefined,
  after: InspectedFleet | null,
  at: number,
): FleetEvent[] {
  if (before === undefined) return [];
  const events: FleetEvent[] = [];
  const membersBefore = new Map((before?.members ?? []).map((member) => [member.id, member.czxid]));
  const membersAfter = new Map((after?.members ?? []).map((member) => [member.id, member.czxid]));
  for (const [id, czxid] of membersBefore) {
    if (membersAfter.get(id) !== czxid) events.push({ kind: 'left', at, member: id });
  }
  for (const [id, czxid] of membersAfter) {
    if (membersBefore.get(id) !== czxid) events.push({ kind: 'joined', at, member: id });
  }
  events.push(...itemEvents(before?.items ?? [], after?.items ?? [], at));
  return events;
}

/**
 * The changes of items from `before` to `after` (taken, moved, freed): every item of the
 * fleet, or only those read again (an item in `before` and not in `after` is freed).
 */
export function itemEvents(
  before: readonly InspectedItem[],
  after: readonly InspectedItem[],
  at: number,
): FleetEvent[] {
  const events: FleetEvent[] = [];
  const ownersBefore = new Map(before.map((item) => [item.item, item.owner]));
  for (const item of after) {
    const was = ownersBefore.get(item.item);
    ownersBefore.delete(item.item);
    const now = item.owner;
    if (was?.node === now?.node) continue;
    if (now && was && ownerName(now) !== ownerName(was)) {
      events.push({
        kind: 'moved',
        at,
        item: item.item,
        from: ownerName(was),
        to: ownerName(now),
        token: now.fencingToken,
      });
    } else if (now) {
      events.push({
        kind: 'taken',
        at,
        item: item.item,
        to: ownerName(now),
        token: now.fencingToken,
      });
    } else if (was) {
      events.push({ kind: 'freed', at, item: item.item, from: ownerName(was) });
    }
  }
  for (const [item, was] of ownersBefore) {
    if (was) events.push({ kind: 'freed', at, item, from: ownerName(was) });
  }
  return events;
}
