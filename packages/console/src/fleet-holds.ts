/**
 * A fleet's holds, pure: an item lock's holder and waiters named by their members.
 */
import type { InspectedHold } from '@zkrx/fleet';
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
