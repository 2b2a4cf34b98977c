/**
 * `zkrx members --watch` and `zkrx partitions --watch`: one persistent recursive watch on the
 * path (`watchTree`) triggers a new read of the fleet on every change (reads coalesced: one in
 * flight, one more queued) and after every reconnection; a 1 s timer redraws the clocks. Draws
 * on the terminal's alternate screen, or writes one JSON line per read with `--json`.
 */
import type { SessionState, ZkClient } from '@zkrx/core';
import { type InspectedFleet, inspectFleet } from '@zkrx/fleet';
import type { Subscription } from 'rxjs';
import {
  type FleetCommand,
  type FleetEvent,
  fleetEventLine,
  fleetEvents,
  renderMembers,
  renderPartitions,
} from './fleet';
import { colours, fitWidth, formatClock, noColours } from './format';
import type { CliIo } from './io';

export interface FleetViewOptions {
  readonly command: FleetCommand;
  readonly connect: string;
  readonly json: boolean;
  readonly colour: boolean;
  readonly io: CliIo;
}

/** Lines of recent changes kept (fewer shown on a short terminal). */
const RECENT_LINES = 10;

/** Runs the live view until the person quits (q, Ctrl-C) or the client fails; resolves the exit code. */
export function fleetView(
  client: ZkClient,
  path: string,
  options: FleetViewOptions,
): Promise<number> {
  const { io, command, json } = options;
  const out = io.stdout;
  const paint = options.colour ? colours : noColours;
  let session: SessionState = client.state;
  let fleet: InspectedFleet | null | undefined;
  let events: FleetEvent[] = [];
  let problem = '';
  let finished = false;

  const draw = () => {
    if (json || finished) return;
    const now = Date.now();
    const width = out.columns ?? 100;
    const height = out.rows ?? 40;
    const connected = session === 'connected' || session === 'reconnected';
    const header = `zkrx ${command} ${path} · ${options.connect} · ${connected ? paint.green(session) : paint.alarm(` ${session.toUpperCase()} `)} · ${formatClock(now)} · q quits`;
    const body =
      fleet === undefined
        ? ['reading…']
        : fleet === null || (command === 'partitions' && fleet.kind !== 'partition')
          ? [
              `No ${command === 'members' ? 'members' : 'partition'} at ${path} yet. Waiting for changes.`,
            ]
          : (command === 'members' ? renderMembers : renderPartitions)(fleet, {
              command,
              now,
              paint,
            });
    const recent = events
      .slice(-RECENT_LINES)
      .reverse()
      .map((event) => `  ${fleetEventLine(event, formatClock)}`);
    const lines = [
      header,
      ...(problem ? [paint.red(problem)] : []),
      '',
      ...body,
      '',
      paint.bold(`Recent changes (${path})`),
      ...(recent.length ? recent : ['  none yet']),
    ].slice(0, height);
    out.write(
      `\u001b[H${lines.map((line) => `${fitWidth(line, width)}\u001b[K`).join('\n')}\u001b[J`,
    );
  };

  return new Promise<number>((resolve) => {
    let reading = false;
    let again = false;
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
          const read = await inspectFleet(client, path);
          const at = Date.now();
          const changes = fleetEvents(fleet, read, at);
          fleet = read;
          events = [...events, ...changes].slice(-100);
          problem = '';
          if (json) out.write(`${JSON.stringify({ at, path, fleet: read, events: changes })}\n`);
          else draw();
        } while (again && !finished);
      } catch (error) {
        problem = `could not read ${path}: ${(error as Error).message} (read again on the next change)`;
        draw();
      } finally {
        reading = false;
      }
    };

    const onKey = (chunk: Buffer | string) => {
      const key = chunk.toString();
      if (key === 'q' || key === 'Q' || key === '\u0003' || key === '\u001b') finish(0);
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
    watching = client.watchTree(path).subscribe({
      next: () => void refresh(),
      error: (error: unknown) => finish(1, `watching ${path} failed: ${(error as Error).message}`),
    });
    draw();
  });
}
