/**
 * A fleet's holds, pure: an item lock's holder and waiters named by their members, and the
 * members' owned items and the balance worked out again after items changed.
 */
import type { InspectedFleet, InspectedHold, InspectedItem } from '@zkrx/fleet';
import type { InspectedParticipant } from '@zkrx/lock';

/** An item lock's holder and waiters as a fleet's holds (members named by their session). */
export function holdsOf(
  bySession: ReadonlyMap<string, string>,
  holder: InspectedParticipant | undefined,
  waiters: readonly InspectedParticipant[],
): { owner: InspectedHold | undefined; waiting: InspectedHold[] } {
  const hold = (participant: InspectedParticipant): InspectedHold => ({
    member: bySession.get(participant.sessionId),
    sessionId: participant.sessionId,
    node: participant.node,
    data: participant.data,
    fencingToken: participant.czxid,
    createdAt: participant.createdAt,
  });
  return { owner: holder && hold(holder), waiting: waiters.map(hold) };
}

/**
 * The fleet with `items`, each member's owned items and the balance worked out again (as
 * `inspectFleet` does: every member owns ⌊k/m⌋ or ⌈k/m⌉ of the k owned items, each owned by a
 * member).
 */
export function withOwners(fleet: InspectedFleet, items: InspectedItem[]): InspectedFleet {
  const owned = new Map<string, string[]>();
  let held = 0;
  let ownedByOthers = false;
  for (const item of items) {
    if (!item.owner) continue;
    held += 1;
    const member = item.owner.member;
    if (member === undefined) {
      ownedByOthers = true;
      continue;
    }
    const list = owned.get(member);
    if (list) list.push(item.item);
    else owned.set(member, [item.item]);
  }
  const members = fleet.members.map((member) => ({ ...member, items: owned.get(member.id) ?? [] }));
  let balanced: boolean | undefined;
  if (fleet.kind === 'partition' && members.length > 0) {
    const low = Math.floor(held / members.length);
    const high = Math.ceil(held / members.length);
    balanced =
      !ownedByOthers &&
      members.every((member) => member.items.length >= low && member.items.length <= high);
  }
  return { ...fleet, items, members, balanced, readAt: Date.now() };
}
