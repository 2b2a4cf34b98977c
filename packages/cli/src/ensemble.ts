/**
 * `zkrx ensemble [path]`: the ensemble's configuration (its version, each server's role and
 * client address), each server's mode and client count (where `srvr` and `cons` are allowed),
 * what this client follows, and — given a path — which server each session holding a node under
 * it (a lock's holder or waiter, a fleet's member, a candidate) is on. `--watch` redraws it.
 */
import {
  type ConfiguredServer,
  clientAddressOf,
  type EnsembleView,
  formatAddress,
  parseEnsembleConfig,
  type ZkClient,
} from '@zkrx/core';
import { fourLetterWord } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import type { Paint } from './format';
import type { CliIo } from './io';

/** One server of the configuration, as its four-letter words describe it. */
export interface EnsembleServerState {
  readonly serverId: number;
  readonly role: ConfiguredServer['role'];
  /** `host:port` as the configuration writes it; undefined when it names none. */
  readonly clientAddress: string | undefined;
  /** `leader`, `follower`, `observer`, `standalone`...; undefined when `srvr` did not answer. */
  readonly mode: string | undefined;
  /** Sessions connected to it (`cons`); undefined when `cons` did not answer. */
  readonly clients: number | undefined;
  /** Why mode or clients are missing (not answering, the word not allowed). */
  readonly problem?: string;
}

/** A session holding nodes under the path, and its server. */
export interface EnsembleSession {
  readonly sessionId: string;
  /** The server id its `cons` lists it on; undefined when no server said. */
  readonly serverId: number | undefined;
  /** The ephemeral nodes it holds under the path. */
  readonly nodes: readonly string[];
}

/** What `zkrx ensemble` reads at one moment. */
export interface EnsembleState {
  readonly at: number;
  /** `/zookeeper/config`'s version (hex); `0` for a static configuration. */
  readonly configVersion: string;
  readonly servers: readonly EnsembleServerState[];
  /** What this client follows (client.ensemble$). */
  readonly client: Pick<EnsembleView, 'hosts' | 'server'>;
  /** With a path: the sessions holding nodes under it. */
  readonly path?: string;
  readonly sessions?: readonly EnsembleSession[];
  /** With a path: nodes left unread past the limit. */
  readonly unread?: number;
}

/** The most nodes read under the path (a fleet of many items: the first ones). */
const MAX_NODES = 2_000;

/** A server's `srvr` and `cons`, or why they are missing. */
async function askServer(
  address: string,
): Promise<Pick<EnsembleServerState, 'mode' | 'clients' | 'problem'> & { sessions: string[] }> {
  const ask = (word: string) => fourLetterWord(address, word, 2_000).catch(() => undefined);
  const [srvr, cons] = await Promise.all([ask('srvr'), ask('cons')]);
  const refused = (answer: string | undefined) =>
    answer === undefined || /not in the whitelist|not executed/.test(answer);
  const mode = refused(srvr) ? undefined : /^Mode: (\S+)/m.exec(srvr!)?.[1];
  const sessions = refused(cons)
    ? []
    : [...cons!.matchAll(/sid=0x([0-9a-f]+)/gi)].map((match) => match[1]!.toLowerCase());
  const problem =
    srvr === undefined && cons === undefined
      ? 'not answering'
      : refused(srvr) || refused(cons)
        ? 'srvr/cons not in its 4lw.commands.whitelist'
        : undefined;
  return {
    mode,
    clients: refused(cons) ? undefined : sessions.length,
    sessions,
    ...(problem ? { problem } : {}),
  };
}

/** The ephemeral nodes under `path` (breadth first, at most {@link MAX_NODES} read), by owner. */
async function ephemeralsUnder(
  client: ZkClient,
  path: string,
): Promise<{ owners: Map<string, string[]>; unread: number }> {
  const owners = new Map<string, string[]>();
  const queue = [path];
  let read = 0;
  while (queue.length > 0 && read < MAX_NODES) {
    const node = queue.shift()!;
    read += 1;
    const stat = await client.promises.exists(node);
    if (!stat) continue;
    const owner = stat.ephemeralOwner.toLowerCase();
    // Containers' owner is Long.MIN_VALUE: no session.
    if (owner !== '0' && owner !== '8000000000000000') {
      owners.set(owner, [...(owners.get(owner) ?? []), node]);
    }
    if (stat.numChildren === 0) continue;
    const children = await client.promises.children(node).catch(() => [] as string[]);
    for (const child of children) queue.push(node === '/' ? `/${child}` : `${node}/${child}`);
  }
  return { owners, unread: queue.length };
}

/**
 * Reads the ensemble once: the configuration, each server's words, the client's view, and
 * with a path the sessions under it.
 *
 * @param client A connected client.
 * @param path A path whose sessions to place, or none.
 * @return What the view shows.
 */
export async function readEnsemble(client: ZkClient, path?: string): Promise<EnsembleState> {
  const [{ data }, view] = await Promise.all([
    client.promises.getConfig(),
    firstValueFrom(client.ensemble$),
  ]);
  const config = parseEnsembleConfig(data.toString('utf8'));
  const configured = config.servers.map((server) => {
    const address = clientAddressOf(server);
    return { server, clientAddress: address && formatAddress(address) };
  });
  // A standalone server names no server: what the client is on stands for the ensemble.
  const targets =
    configured.length > 0
      ? configured
      : view.server
        ? [{ server: undefined, clientAddress: view.server }]
        : [];
  const answers = await Promise.all(
    targets.map(({ clientAddress }) =>
      clientAddress ? askServer(clientAddress) : Promise.resolve(undefined),
    ),
  );
  const servers: EnsembleServerState[] = targets.map(({ server, clientAddress }, index) => {
    const answer = answers[index];
    return {
      serverId: server?.serverId ?? 0,
      role: server?.role ?? 'participant',
      clientAddress,
      mode: answer?.mode,
      clients: answer?.clients,
      ...(answer?.problem ? { problem: answer.problem } : {}),
      ...(clientAddress ? {} : { problem: 'the configuration names no client address' }),
    };
  });
  const state: EnsembleState = {
    at: Date.now(),
    configVersion: config.version,
    servers,
    client: { hosts: view.hosts, server: view.server },
  };
  if (path === undefined) return state;
  const { owners, unread } = await ephemeralsUnder(client, path);
  const serverOf = new Map<string, number>();
  targets.forEach(({ server }, index) => {
    for (const session of answers[index]?.sessions ?? [])
      serverOf.set(session, server?.serverId ?? 0);
  });
  const sessions = [...owners]
    .map(([sessionId, nodes]) => ({ sessionId, serverId: serverOf.get(sessionId), nodes }))
    .sort((a, b) => a.sessionId.localeCompare(b.sessionId));
  return { ...state, path, sessions, unread };
}

/**
 * Draws a read as text lines.
 *
 * @param state What {@link readEnsemble} read.
 * @param paint Colours (or none).
 * @return The lines.
 */
export function renderEnsemble(state: EnsembleState, paint: Paint): string[] {
  const lines = [
    paint.bold(
      `Configuration version ${state.configVersion}${state.configVersion === '0' ? ' (static)' : ''}`,
    ),
  ];
  const rows = state.servers.map((server) => [
    server.serverId === 0 ? '-' : String(server.serverId),
    server.role,
    server.clientAddress ?? '-',
    server.mode ?? '-',
    server.clients === undefined ? '-' : String(server.clients),
    server.problem ?? '',
  ]);
  const header = ['server', 'role', 'client address', 'mode', 'clients', ''];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')}`.trimEnd();
  lines.push(paint.dim(line(header)), ...rows.map(line), '');
  lines.push(
    `This client follows ${state.client.hosts.join(',')}${state.client.server ? `, on ${state.client.server}` : ''}`,
  );
  if (state.path !== undefined) {
    const sessions = state.sessions ?? [];
    lines.push('', paint.bold(`Sessions holding nodes under ${state.path} (${sessions.length})`));
    if (sessions.length === 0) lines.push('  none');
    for (const session of sessions) {
      const where =
        session.serverId === undefined ? 'server unknown' : `on server ${session.serverId}`;
      const nodes =
        session.nodes.length === 1
          ? session.nodes[0]
          : `${session.nodes.length} nodes (${session.nodes[0]}, …)`;
      lines.push(`  0x${session.sessionId}  ${where}  ${nodes}`);
    }
    if (state.unread) lines.push(paint.dim(`  … ${state.unread} more nodes not read`));
  }
  return lines;
}

/**
 * `zkrx ensemble [path]` once: the read, as text or one JSON line.
 *
 * @return The exit code (0).
 */
export async function showEnsemble(
  client: ZkClient,
  path: string | undefined,
  options: { readonly json: boolean; readonly paint: Paint; readonly io: CliIo },
): Promise<number> {
  const state = await readEnsemble(client, path);
  options.io.stdout.write(
    options.json
      ? `${JSON.stringify(state)}\n`
      : `${renderEnsemble(state, options.paint).join('\n')}\n`,
  );
  return 0;
}
