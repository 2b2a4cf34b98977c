/**
 * InspectedLock values made by hand, for the unit tests of what the command draws from them.
 */
import type { InspectedLock, InspectedParticipant } from '@zkrx/lock';

let sequence = 0;

/** A participant of `path` owned by `sessionId`, created at `createdAt`. */
export function participant(
  path: string,
  sessionId: string,
  fields: Partial<InspectedParticipant> = {},
): InspectedParticipant {
  const number = sequence++;
  return {
    node: `${path}/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-${String(number).padStart(10, '0')}`,
    mode: 'exclusive',
    layout: 'curator',
    sequence: number,
    sessionId,
    data: `host-${sessionId}:1`,
    revokeRequested: false,
    createdAt: 1_000,
    ageMs: 0,
    ownSession: false,
    version: 0,
    czxid: 100 + number,
    ...fields,
  };
}

export function lock(
  path: string,
  holders: InspectedParticipant[],
  waiters: InspectedParticipant[] = [],
  fields: Partial<InspectedLock> = {},
): InspectedLock {
  return {
    path,
    kind: 'mutex',
    layout: 'curator',
    holders,
    waiters,
    maxLeases: undefined,
    pzxid: 1,
    readAt: 0,
    ...fields,
  };
}
