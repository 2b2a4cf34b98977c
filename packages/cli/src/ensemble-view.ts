/**
 * `zkrx ensemble --watch`: the ensemble's configuration, each server's mode and clients, and
 * which server each session under the path is on, read again every 2 s and on every change
 * under the path (watch-screen.ts).
 */
import type { ZkClient } from '@zkrx/core';
import { type EnsembleState, readEnsemble, renderEnsemble } from './ensemble';
import { formatClock } from './format';
import { type WatchScreenOptions, watchScreen } from './watch-screen';

/** How often the servers are asked again (their modes and client counts change unwatched). */
const POLL_MS = 2_000;
/** Lines of recent changes kept. */
const RECENT_LINES = 10;

/** What changed between two reads, as lines. */
function changesOf(before: EnsembleState | undefined, after: EnsembleState): string[] {
  if (!before) return [];
  const at = formatClock(after.at);
  const lines: string[] = [];
  if (before.configVersion !== after.configVersion) {
    const ids = (state: EnsembleState) => state.servers.map((server) => server.serverId);
    const added = ids(after).filter((id) => !ids(before).includes(id));
    const removed = ids(before).filter((id) => !ids(after).includes(id));
    lines.push(
      `${at}  configuration ${before.configVersion} → ${after.configVersion}${added.length ? `, added ${added.join(', ')}` : ''}${removed.length ? `, removed ${removed.join(', ')}` : ''}`,
    );
  }
  const placed = new Map((before.sessions ?? []).map((session) => [session.sessionId, session]));
  for (const session of after.sessions ?? []) {
    const earlier = placed.get(session.sessionId);
    if (earlier && earlier.serverId !== session.serverId && session.serverId !== undefined) {
      lines.push(
        `${at}  0x${session.sessionId} moved: server ${earlier.serverId ?? '?'} → ${session.serverId}`,
      );
    }
  }
  return lines;
}

/** The live view of `zkrx ensemble` (see watch-screen.ts). */
export function ensembleView(
  client: ZkClient,
  path: string | undefined,
  options: WatchScreenOptions,
): Promise<number> {
  let state: EnsembleState | undefined;
  let recent: string[] = [];
  const read = async () => {
    const found = await readEnsemble(client, path);
    return () => {
      recent = [...recent, ...changesOf(state, found)].slice(-100);
      state = found;
      return found;
    };
  };
  const frame = () => ({
    top: [],
    body: state ? renderEnsemble(state, options.paint) : ['reading…'],
    recentTitle: 'Recent changes',
    recent: recent
      .slice(-RECENT_LINES)
      .reverse()
      .map((line) => `  ${line}`),
  });
  // Without a path, the configuration node is what changes are watched on.
  return watchScreen(client, path ?? '/zookeeper/config', options, {
    read,
    maxTornReads: 0,
    frame,
    pollMs: POLL_MS,
  });
}
