/**
 * `zkrx locks --watch` and `zkrx leaders --watch`: the locks (or elections) under the path, read
 * again on every change under it (watch-screen.ts), with the hand-overs and losses seen between
 * two reads.
 */
import { type LiveEvent, LiveState } from '@zkrx/console';
import type { ZkClient } from '@zkrx/core';
import { type InspectedLock, type InspectedParticipant, inspectTree } from '@zkrx/lock';
import { formatClock, formatData, formatDuration, formatSession, type Paint } from './format';
import { nothingFound } from './list';
import { type ListCommand, listed, renderLocks } from './render';
import { type WatchScreenOptions, watchScreen } from './watch-screen';

/** How long a lost lease stays marked on its lock's title. */
const LOST_MARK_MS = 60_000;
/** Reads in a row thrown away because a change came during them, before one is used anyway. */
const MAX_TORN_READS = 5;
/** Lines of recent changes shown (fewer on a short terminal). */
const RECENT_LINES = 8;

function who(participant: InspectedParticipant): string {
  return `${formatSession(participant.sessionId)} (${formatData(participant.data, 24)})`;
}

/** One line of the "Recent changes" list (lock paths below `root` relative to it). */
export function eventLine(
  event: LiveEvent,
  paint: Paint,
  command: ListCommand,
  root = '/',
): string {
  const held =
    event.heldMs === undefined
      ? ''
      : ` (held ${event.exact ? '' : '≤'}${formatDuration(event.heldMs)})`;
  const holds = command === 'leaders' ? 'leads' : 'holds';
  const prefix = `${root}/`;
  const path = event.path.startsWith(prefix) ? event.path.slice(prefix.length) : event.path;
  const start = `${formatClock(event.at)}  ${path}  `;
  const { from, to } = event;
  if (event.lost && from) {
    const then = to ? `; now ${who(to)} ${holds}` : '';
    return `${start}${paint.alarm(' LOST ')} ${who(from)}: session ended while holding${held}${then}`;
  }
  if (event.kind === 'handed-over' && from && to) {
    return `${start}handed over: ${who(from)} → ${who(to)}${held}`;
  }
  if (event.kind === 'ended' && from) return `${start}free: ${who(from)} no longer ${holds}${held}`;
  return `${start}taken: ${to ? who(to) : '?'} ${holds}`;
}

/**
 * The live view of `locks` and `leaders` (see watch-screen.ts): each read is compared with the
 * one before (`LiveState`), a lost lease stays marked on its lock's title for a minute.
 */
export function liveView(
  client: ZkClient,
  root: string,
  options: WatchScreenOptions & { readonly command: ListCommand },
): Promise<number> {
  const { command, paint } = options;
  const state = new LiveState();
  let reads = 0;

  const read = async () => {
    const locks = listed(command, await inspectTree(client, root));
    const at = Date.now();
    const gone = new Map<string, number>();
    await Promise.all(
      state.missing(locks).map(async (lock: InspectedLock) => {
        const parent =
          lock.kind === 'semaphore' && lock.layout !== 'kazoo' ? `${lock.path}/leases` : lock.path;
        const stat = await client.promises.exists(parent).catch(() => null);
        if (stat) gone.set(lock.path, stat.pzxid);
      }),
    );
    return () => {
      const events = state.update(locks, at, (path) => gone.get(path));
      reads += 1;
      return { at, path: root, locks, events };
    };
  };

  const frame = (now: number) => {
    const locks = state.locks;
    const lostAt = new Map<string, number>();
    for (const event of state.events) if (event.lost) lostAt.set(event.path, event.at);
    const body = renderLocks(locks, { command, now, paint, heldSince: state.heldSince }).map(
      (line) => {
        for (const [path, at] of lostAt) {
          if (now - at < LOST_MARK_MS && line.startsWith(paint.bold(path))) {
            return `${line}  ${paint.alarm(` LOST a lease ${formatDuration(now - at)} ago `)}`;
          }
        }
        return line;
      },
    );
    const holding = locks.reduce((sum, lock) => sum + lock.holders.length, 0);
    const waiting = locks.reduce((sum, lock) => sum + lock.waiters.length, 0);
    const summary =
      reads === 0
        ? 'reading…'
        : locks.length === 0
          ? `${nothingFound(command, root)} Waiting for changes.`
          : `${locks.length} ${command === 'locks' ? 'lock' : 'election'}${locks.length === 1 ? '' : 's'} · ${holding} ${command === 'locks' ? 'holding' : 'leading'} · ${waiting} waiting`;
    const recent = state.events
      .slice(-RECENT_LINES)
      .reverse()
      .map((event) => `  ${eventLine(event, paint, command, root)}`);
    return { top: [summary], body, recentTitle: `Recent changes (under ${root})`, recent };
  };

  return watchScreen(client, root, options, { read, maxTornReads: MAX_TORN_READS, frame });
}
