/**
 * What every `--watch` view shares: one persistent recursive watch on the path (`watchTree`)
 * triggers a new read on every change (reads coalesced: one in flight, one more queued — the
 * console's `CoalescedRead`) and after every reconnection; a 1 s timer redraws the clocks; q or Ctrl-C quits. Draws on the terminal's
 * alternate screen, or writes one JSON line per read with `--json`. The view says what it reads
 * and what it draws of it (live-view.ts: locks and elections, fleet-view.ts: a fleet).
 */
import { CoalescedRead } from '@zkrx/console';
import type { SessionState, ZkClient } from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { fitWidth, formatClock, type Paint } from './format';
import type { CliIo } from './io';

export interface WatchScreenOptions {
  /** The command, as the header names it (`locks`, `members`...). */
  readonly command: string;
  readonly connect: string;
  readonly json: boolean;
  readonly paint: Paint;
  readonly io: CliIo;
}

/** What a view draws below the header, at one moment. */
export interface WatchFrame {
  /** Lines right under the header (a summary). */
  readonly top: readonly string[];
  /** The table: cut to the room left, with a `… N more lines` line, on a short terminal. */
  readonly body: readonly string[];
  readonly recentTitle: string;
  /** The recent changes, newest first. */
  readonly recent: readonly string[];
}

/** A view's own part of a watch screen. */
export interface WatchedView {
  /**
   * Reads the path once. Resolves a function that takes the read in (compares it with the one
   * before) and returns its JSON line; it is not called for a read thrown away as torn.
   */
  read(): Promise<() => object>;
  /**
   * Reads in a row thrown away because a change was notified during them (such a read may show
   * the change in part), before one is taken anyway; 0 takes every read. The first read is
   * taken at once, torn or not (the one that follows corrects it).
   */
  readonly maxTornReads: number;
  /** What to draw at `now` (ms since the epoch). */
  frame(now: number): WatchFrame;
  /** Read again every this many ms as well (for what no watch tells: servers' client counts). */
  readonly pollMs?: number;
}

/**
 * Runs a live view until the person quits (q, Ctrl-C) or the client fails.
 *
 * @param client The connected client.
 * @param path The path watched (and read by the view).
 * @param options The command line's choices and where to write.
 * @param view What the view reads and draws.
 * @return The exit code: 0 quit, 1 the watch or the credentials failed.
 */
export function watchScreen(
  client: ZkClient,
  path: string,
  options: WatchScreenOptions,
  view: WatchedView,
): Promise<number> {
  const { io, paint, json } = options;
  const out = io.stdout;
  let session: SessionState = client.state;
  let problem = '';
  let finished = false;

  const draw = () => {
    if (json || finished) return;
    const now = Date.now();
    const width = out.columns ?? 100;
    const height = out.rows ?? 40;
    const frame = view.frame(now);
    const connected = session === 'connected' || session === 'reconnected';
    const state = connected ? paint.green(session) : paint.alarm(` ${session.toUpperCase()} `);
    const header = `zkrx ${options.command} ${path} · ${options.connect} · ${state} · ${formatClock(now)} · q quits`;
    const top = [header, ...frame.top, ...(problem ? [paint.red(problem)] : []), ''];
    const bottom = [
      '',
      paint.bold(frame.recentTitle),
      ...(frame.recent.length ? frame.recent : ['  none yet']),
    ];
    const room = Math.max(1, height - top.length - Math.min(bottom.length, 4));
    const { body } = frame;
    const shown =
      body.length > room
        ? [...body.slice(0, room - 1), paint.dim(`… ${body.length - room + 1} more lines`)]
        : body;
    const lines = [...top, ...shown, ...bottom].slice(0, height);
    out.write(
      `\u001b[H${lines.map((line) => `${fitWidth(line, width)}\u001b[K`).join('\n')}\u001b[J`,
    );
  };

  return new Promise<number>((resolve) => {
    let ticker: ReturnType<typeof setInterval> | undefined;
    let poller: ReturnType<typeof setInterval> | undefined;
    let watching: Subscription | undefined;
    let sessions: Subscription | undefined;
    let stopInterrupt: (() => void) | undefined;

    const reads = new CoalescedRead(
      () => view.read(),
      {
        take: (take) => {
          if (finished) return;
          const line = take();
          problem = '';
          if (json) out.write(`${JSON.stringify(line)}\n`);
          else draw();
        },
        fail: (error) => {
          problem = `could not read ${path}: ${(error as Error).message} (read again on the next change)`;
          draw();
        },
      },
      { maxTornReads: view.maxTornReads },
    );

    const onKey = (chunk: Buffer | string) => {
      const key = chunk.toString();
      if (key === 'q' || key === 'Q' || key === '\u0003' || key === '\u001b') finish(0);
    };

    const finish = (code: number, message?: string) => {
      if (finished) return;
      finished = true;
      reads.close();
      clearInterval(ticker);
      clearInterval(poller);
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
    if (view.pollMs) poller = setInterval(() => reads.request(), view.pollMs);
    sessions = client.session$.subscribe((event) => {
      session = event.state;
      if (event.state === 'auth-failed') finish(1, 'ZooKeeper refused the credentials');
      else draw();
    });
    watching = client.watchTree(path).subscribe({
      next: () => reads.request(),
      error: (error: unknown) => finish(1, `watching ${path} failed: ${(error as Error).message}`),
    });
    draw();
  });
}
