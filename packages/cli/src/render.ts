/**
 * The table `zkrx locks` and `zkrx leaders` print (and the live view draws): one block a lock,
 * holders first, then waiters in line, columns aligned across every block.
 */
import type { InspectedLock, InspectedParticipant } from '@zkrx/lock';
import { alignedColumns, formatData, formatDuration, formatSession, type Paint } from './format';

export type ListCommand = 'locks' | 'leaders';

/** The kinds each listing shows (a mutex's layout is also an election's: both show it). */
export function listed(command: ListCommand, locks: readonly InspectedLock[]): InspectedLock[] {
  return locks.filter((lock) =>
    command === 'locks'
      ? lock.kind !== 'election'
      : lock.kind === 'election' || lock.kind === 'mutex',
  );
}

export interface RenderOptions {
  readonly command: ListCommand;
  /** The time ages are counted to (ms since the epoch). */
  readonly now: number;
  readonly paint: Paint;
  /** When a holder's hold began, if known (the live view saw it start); else at most its age. */
  readonly heldSince?: (node: string) => number | undefined;
}

const HEADER = ['ROLE', 'MODE', 'SESSION', 'DATA', 'SINCE', 'NODE'] as const;

function kindLabel(lock: InspectedLock, command: ListCommand): string {
  switch (lock.kind) {
    case 'mutex':
      return command === 'leaders' ? 'election (selector layout) or mutex' : 'mutex';
    case 'election':
      return 'election';
    case 'read-write':
      return 'read-write lock';
    default:
      return 'semaphore';
  }
}

function counts(lock: InspectedLock, command: ListCommand): string {
  const waiting = `${lock.waiters.length} waiting`;
  if (lock.kind === 'semaphore') {
    const capacity = lock.maxLeases === undefined ? '' : ` of ${lock.maxLeases}`;
    return `${lock.holders.length}${capacity} leases held · ${waiting}`;
  }
  if (lock.kind === 'election' || command === 'leaders') {
    return lock.holders.length === 0
      ? 'no leader'
      : `leader + ${lock.waiters.length} candidate${lock.waiters.length === 1 ? '' : 's'}`;
  }
  return `${lock.holders.length} holder${lock.holders.length === 1 ? '' : 's'} · ${waiting}`;
}

/** The node's name, or its path below the lock (`leases/…`), or its full path elsewhere. */
function nodeLabel(lock: InspectedLock, participant: InspectedParticipant): string {
  const prefix = lock.path === '/' ? '/' : `${lock.path}/`;
  return participant.node.startsWith(prefix)
    ? participant.node.slice(prefix.length)
    : participant.node;
}

/** The lines of the table for `locks` (no trailing newline; none for no locks). */
export function renderLocks(locks: readonly InspectedLock[], options: RenderOptions): string[] {
  const { paint, now, command } = options;
  const blocks = locks.map((lock) => {
    const leads = lock.kind === 'election' || command === 'leaders';
    const rows = [
      ...lock.holders.map((participant) => {
        const exact = options.heldSince?.(participant.node);
        const held =
          exact === undefined
            ? `held ≤${formatDuration(now - participant.createdAt)}`
            : `held ${formatDuration(now - exact)}`;
        return row(lock, participant, paint.green(leads ? 'leads' : 'holds'), held, paint);
      }),
      ...lock.waiters.map((participant, index) =>
        row(
          lock,
          participant,
          `waits ${placeOf(lock, index)}`,
          `waiting ${formatDuration(now - participant.createdAt)}`,
          paint,
        ),
      ),
    ];
    const title = `${paint.bold(lock.path)}  ${kindLabel(lock, command)} · ${lock.layout} · ${counts(lock, command)}`;
    return { title, rows };
  });
  if (blocks.length === 0) return [];
  // Columns aligned across every block.
  const line = alignedColumns(
    HEADER,
    blocks.flatMap((block) => block.rows),
  );
  const lines = [paint.dim(line(HEADER))];
  for (const [index, block] of blocks.entries()) {
    if (index > 0) lines.push('');
    lines.push(block.title);
    for (const cells of block.rows) lines.push(line(cells));
  }
  return lines;
}

/**
 * A waiter's place in line. A semaphore's taker waiting for a free lease shows twice (its
 * `locks` node and its lease node, in that order): both have the taker's place.
 */
export function placeOf(lock: InspectedLock, index: number): number {
  let place = 0;
  for (let at = 0; at <= index; at++) {
    const waiter = lock.waiters[at];
    const sameTaker =
      lock.kind === 'semaphore' &&
      waiter?.mode === 'lease' &&
      at > 0 &&
      lock.waiters[at - 1]?.sessionId === waiter.sessionId;
    if (!sameTaker) place += 1;
  }
  return place;
}

function row(
  lock: InspectedLock,
  participant: InspectedParticipant,
  role: string,
  since: string,
  paint: Paint,
): string[] {
  const data = participant.revokeRequested
    ? paint.yellow('revoke requested')
    : formatData(participant.data);
  const session = formatSession(participant.sessionId) + (participant.ownSession ? ' (me)' : '');
  return [role, participant.mode, session, data, since, nodeLabel(lock, participant)];
}
