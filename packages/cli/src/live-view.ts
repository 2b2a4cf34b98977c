/**
 * `--watch`: the live view. One persistent recursive watch on the path (`watchTree`) triggers a
 * new read of the tree on every change (reads coalesced: one in flight, one more queued) and after
 * every reconnection (`resync`); a 1 s timer only redraws the clocks. Draws on the terminal's
 * alternate screen, or writes one JSON line per read with `--json`.
 */
import type { SessionState, ZkClient } from '@zkrx/core';
import { type InspectedLock, type InspectedParticipant, inspectTree } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import {
  colours,
  fitWidth,
  formatClock,
  formatData,
  formatDuration,
  formatSession,
  noColours,
  type Paint,
} from './format';
import type { CliIo } from './io';
import { nothingFound } from './list';
import { type LiveEvent, LiveState } from './live-state';
import { type ListCommand, listed, renderLocks } from './render';

export interface LiveViewOptions {
  readonly command: ListCommand;
  readonly connect: string;
  readonly json: boolean;
  readonly colour: boolean;
  readonly io: CliIo;
}

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

/** Runs the live view until the person quits (q, Ctrl-C) or the client fails; resolves the exit code. */
export function liveView(
  client: ZkClient,
  root: string,
  options: LiveViewOptions,
): Promise<number> {
  const { io, command, json } = options;
  const out = io.stdout;
  const paint = options.colour ? colours : noColours;
  const state = new LiveState();
  let session: SessionState = client.state;
  let problem = '';
  let reads = 0;
  let finished = false;

  const draw = () => {
    if (json || finished) return;
    const now = Date.now();
    const width = out.columns ?? 100;
    const height = out.rows ?? 40;
    const locks = state.locks;
    const lostAt = new Map<string, number>();
    for (const event of state.events) if (event.lost) lostAt.set(event.path, event.at);
    const table = renderLocks(locks, { command, now, paint, heldSince: state.heldSince }).map(
      (line) => {
        for (const [path, at] of lostAt) {
          if (now - at < LOST_MARK_MS && line.startsWith(paint.bold(path))) {
            return `${line}  ${paint.alarm(` LOST a lease ${formatDuration(now - at)} ago `)}`;
          }
        }
        return line;
      },
    );
    const connected = session === 'connected' || session === 'reconnected';
    const header = `zkrx ${command} ${root} · ${options.connect} · ${connected ? paint.green(session) : paint.alarm(` ${session.toUpperCase()} `)} · ${formatClock(now)} · q quits`;
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
    const top = [header, summary, ...(problem ? [paint.red(problem)] : []), ''];
    const bottom = [
      '',
      paint.bold(`Recent changes (under ${root})`),
      ...(recent.length ? recent : ['  none yet']),
    ];
    const room = Math.max(1, height - top.length - Math.min(bottom.length, 4));
    let body = table;
    if (body.length > room) {
      body = [...table.slice(0, room - 1), paint.dim(`… ${table.length - room + 1} more lines`)];
    }
    const lines = [...top, ...body, ...bottom].slice(0, height);
    out.write(
      `\u001b[H${lines.map((line) => `${fitWidth(line, width)}\u001b[K`).join('\n')}\u001b[J`,
    );
  };

  return new Promise<number>((resolve) => {
    let reading = false;
    let again = false;
    let torn = 0;
    let ticker: ReturnType<typeof setInterval> | undefined;
    let watching: Subscription | undefined;
    let sessions: Subscription | undefined;
    let stopInterrupt: (() => void) | undefined;

    const refresh = async (): Promise<void> => {
      if (finished) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const locks = listed(command, await inspectTree(client, root));
          const at = Date.now();
          const gone = new Map<string, number>();
          await Promise.all(
            state.missing(locks).map(async (lock: InspectedLock) => {
              const parent =
                lock.kind === 'semaphore' && lock.layout !== 'kazoo'
                  ? `${lock.path}/leases`
                  : lock.path;
              const stat = await client.promises.exists(parent).catch(() => null);
              if (stat) gone.set(lock.path, stat.pzxid);
            }),
          );
          // A change notified during the read may have been read in part (ZooKeeper sends a
          // change's notification before any reply that shows the change): read again rather
          // than compare a torn read, unless changes never stop.
          if (again && torn < MAX_TORN_READS) {
            torn += 1;
            continue;
          }
          torn = 0;
          const events = state.update(locks, at, (path) => gone.get(path));
          reads += 1;
          problem = '';
          if (json) out.write(`${JSON.stringify({ at, path: root, locks, events })}\n`);
          else draw();
        } while (again && !finished);
      } catch (error) {
        problem = `could not read ${root}: ${(error as Error).message} (read again on the next change)`;
        draw();
      } finally {
        reading = false;
      }
    };

    const finish = (code: number, message?: string) => {
      if (finished) return;
      finished = true;
      clearInterval(ticker);
      watching?.unsubscribe();
      sessions?.unsubscribe();
      stopInterrupt?.();
      out.off?.('resize', draw);
      if (io.stdin.isTTY && !json) {
        io.stdin.setRawMode?.(false);
        io.stdin.off('data', onKey);
        io.stdin.pause();
      }
      if (!json) out.write('\u001b[?25h\u001b[?1049l');
      if (message) io.stderr.write(`zkrx: ${message}\n`);
      resolve(code);
    };

    const onKey = (chunk: Buffer | string) => {
      const key = chunk.toString();
      if (key === 'q' || key === 'Q' || key === '\u0003' || key === '\u001b') finish(0);
    };

    if (!json) {
      out.write('\u001b[?1049h\u001b[?25l');
      out.on?.('resize', draw);
      if (io.stdin.isTTY) {
        io.stdin.setRawMode?.(true);
        io.stdin.on('data', onKey);
        io.stdin.resume();
      }
    }
    stopInterrupt = io.onInterrupt(() => finish(0));
    ticker = setInterval(draw, 1_000);
    sessions = client.session$.subscribe((event) => {
      session = event.state;
      if (event.state === 'auth-failed') finish(1, 'ZooKeeper refused the credentials');
      else draw();
    });
    watching = client.watchTree(root).subscribe({
      next: () => void refresh(),
      error: (error: unknown) => finish(1, `watching ${root} failed: ${(error as Error).message}`),
    });
    draw();
  });
}
