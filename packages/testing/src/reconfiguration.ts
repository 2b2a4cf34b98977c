/**
 * Dynamic reconfiguration spoken in jute: read an ensemble's configuration (`/zookeeper/config`)
 * and change its membership (`reconfig`) as ZooKeeper's super user, with the retries a change
 * made while another one settles needs.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReconfigurationError } from './errors';
import {
  decodeDataReply,
  decodeReplyHeader,
  encodeAuthPacket,
  encodeGetDataRequest,
  encodeReconfigRequest,
  type ReconfigChange,
  Xid,
} from './jute';
import { openRawSession } from './raw-session';

/** The node that holds an ensemble's configuration. */
export const CONFIGURATION_NODE = '/zookeeper/config';

/** The user name ZooKeeper's `superDigest` gives every right (reconfig included). */
const SUPER_USER = 'super';

/** KeeperException codes a reconfiguration is tried again after. */
const NEW_CONFIG_NO_QUORUM = -13;
const BAD_ARGUMENTS = -8;
const RECONFIG_IN_PROGRESS = -14;

/**
 * The system property that makes `super:<password>` ZooKeeper's super user, as the server reads
 * it (`DigestAuthenticationProvider.superDigest`: the user, then base64 of SHA-1 of
 * `user:password`).
 *
 * ## Example
 *
 * ```ts
 * console.log(superDigestProperty('secret'));
 * // Output: { 'zookeeper.DigestAuthenticationProvider.superDigest': 'super:...' }
 * ```
 *
 * @param password The super user's password.
 * @return The property, to start each member with.
 */
export function superDigestProperty(password: string): Record<string, string> {
  const digest = createHash('sha1').update(`${SUPER_USER}:${password}`).digest('base64');
  return { 'zookeeper.DigestAuthenticationProvider.superDigest': `${SUPER_USER}:${digest}` };
}

/** One server of a configuration, as `/zookeeper/config` writes it. */
export interface ConfiguredServer {
  /** `server.N`'s N. */
  readonly serverId: number;
  readonly role: 'participant' | 'observer';
  /** The client address as written (`127.0.0.1:2181`), undefined when the line names none. */
  readonly clientAddress: string | undefined;
}

/** An ensemble's configuration: its version and servers. */
export interface EnsembleConfiguration {
  /** `version=` as written (hex, the zxid that made it; `0` for a static configuration). */
  readonly version: string;
  readonly servers: readonly ConfiguredServer[];
  /** The node's text. */
  readonly text: string;
}

/**
 * Reads the `server.N=` lines and `version=` of a configuration's text.
 *
 * ## Example
 *
 * ```ts
 * const text = 'server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=100000000';
 * console.log(parseConfiguration(text).servers[0]);
 * // Output: { serverId: 1, role: 'participant', clientAddress: '127.0.0.1:2181' }
 * ```
 *
 * @param text The configuration node's data.
 * @return Its version and servers, by id.
 */
export function parseConfiguration(text: string): EnsembleConfiguration {
  let version = '0';
  const servers: ConfiguredServer[] = [];
  for (const line of text.split('\n')) {
    const equals = line.indexOf('=');
    if (equals === -1) continue;
    const key = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    if (key === 'version') version = value;
    const id = /^server\.(\d+)$/.exec(key)?.[1];
    if (id === undefined) continue;
    const [quorum = '', client] = value.split(';');
    servers.push({
      serverId: Number(id),
      role: quorum.endsWith(':observer') ? 'observer' : 'participant',
      clientAddress: client?.trim() || undefined,
    });
  }
  servers.sort((a, b) => a.serverId - b.serverId);
  return { version, servers, text };
}

/**
 * Reads the configuration a server serves (`getData /zookeeper/config` on a session of its
 * own). Rejects when the server cannot be reached.
 *
 * @param hostPort The server, `host:port`.
 * @return Its configuration.
 */
export async function readConfiguration(hostPort: string): Promise<EnsembleConfiguration> {
  const { session, request } = await openRawSession(hostPort, { keepAlive: false });
  try {
    const reply = await request(1, encodeGetDataRequest(1, CONFIGURATION_NODE));
    const { err } = decodeReplyHeader(reply);
    if (err !== 0) {
      throw new ReconfigurationError(`Reading ${CONFIGURATION_NODE} on ${hostPort} failed`, err);
    }
    return parseConfiguration(decodeDataReply(reply).toString('utf8'));
  } finally {
    await session.close().catch(() => session.disconnect());
  }
}

/**
 * Changes the ensemble's membership as the super user, through the first of `through()` that
 * answers, and resolves the new configuration. A change refused because another one is in
 * progress, or because the new configuration's quorum is not yet synced with the leader (a
 * server that just joined), is tried again until `timeoutMs`; so is one whose answer was lost
 * (the server dropped its clients: a leader's removal restarts every server's client service)
 * unless the configuration read afterwards shows it made.
 *
 * ## Example
 *
 * ```ts
 * const configuration = await reconfigure(() => ['127.0.0.1:2181'], 'secret', { leaving: [1] });
 * console.log(configuration.servers.map((server) => server.serverId));
 * // Output: [ 2, 3 ]
 * ```
 *
 * @param through The members to send it through (`host:port`), asked again at each attempt.
 * @param password The super user's password ({@link superDigestProperty}).
 * @param change The servers joining (`server.N=...` lines) and leaving (ids).
 * @param timeoutMs How long to keep trying.
 * @return The configuration the change made.
 */
export async function reconfigure(
  through: () => readonly string[],
  password: string,
  change: ReconfigChange,
  timeoutMs = 30_000,
): Promise<EnsembleConfiguration> {
  const deadline = Date.now() + timeoutMs;
  /** An earlier attempt got no answer: it may have made the change (a retry then says "no change"). */
  let uncertain = false;
  for (let attempt = 1; ; attempt++) {
    const candidates = through();
    const hostPort = candidates[(attempt - 1) % Math.max(1, candidates.length)];
    if (hostPort === undefined) throw new Error('No running member to reconfigure through');
    let outcome: { err: number; reply: Buffer } | Error;
    try {
      outcome = await reconfigureOnce(hostPort, password, change, timeoutMs);
    } catch (error) {
      if (ReconfigurationError.isInstance(error)) throw error;
      outcome = error as Error;
    }
    if (!(outcome instanceof Error) && outcome.err === 0) {
      return parseConfiguration(decodeDataReply(outcome.reply).toString('utf8'));
    }
    if (outcome instanceof Error || (uncertain && outcome.err === BAD_ARGUMENTS)) {
      // No answer: the change may be made. The configuration says.
      uncertain = true;
      const made = await madeConfiguration(through, change, deadline);
      if (made) return made;
    } else if (outcome.err !== RECONFIG_IN_PROGRESS && outcome.err !== NEW_CONFIG_NO_QUORUM) {
      throw new ReconfigurationError(
        `reconfig ${describeChange(change)} through ${hostPort} failed`,
        outcome.err,
      );
    }
    if (Date.now() >= deadline) {
      throw outcome instanceof Error
        ? new Error(`reconfig ${describeChange(change)}: ${outcome.message}`, { cause: outcome })
        : new ReconfigurationError(
            `reconfig ${describeChange(change)} through ${hostPort} failed`,
            outcome.err,
          );
    }
    await sleep(Math.min(1_000, 100 * attempt));
  }
}

/** One reconfig request on a session of its own: its return code and reply. */
async function reconfigureOnce(
  hostPort: string,
  password: string,
  change: ReconfigChange,
  timeoutMs: number,
): Promise<{ err: number; reply: Buffer }> {
  const { session, request } = await openRawSession(hostPort, { keepAlive: false });
  try {
    const auth = decodeReplyHeader(
      await request(Xid.auth, encodeAuthPacket('digest', `${SUPER_USER}:${password}`)),
    );
    if (auth.err !== 0) {
      throw new ReconfigurationError(`${hostPort} refused the super user`, auth.err);
    }
    const reply = await request(1, encodeReconfigRequest(1, change), timeoutMs);
    return { err: decodeReplyHeader(reply).err, reply };
  } finally {
    await session.close().catch(() => session.disconnect());
  }
}

/**
 * The configuration, once a member answers (until `deadline`), if `change` is made in it:
 * every joining server named, every leaving one gone.
 */
async function madeConfiguration(
  through: () => readonly string[],
  change: ReconfigChange,
  deadline: number,
): Promise<EnsembleConfiguration | undefined> {
  while (Date.now() < deadline) {
    for (const hostPort of through()) {
      const configuration = await readConfiguration(hostPort).catch(() => undefined);
      if (!configuration) continue;
      const ids = configuration.servers.map((server) => server.serverId);
      const joined = (change.joining ?? []).every((line) =>
        ids.includes(Number(/^server\.(\d+)=/.exec(line)?.[1])),
      );
      const left = (change.leaving ?? []).every((id) => !ids.includes(id));
      return joined && left ? configuration : undefined;
    }
    await sleep(100);
  }
  return undefined;
}

function describeChange(change: ReconfigChange): string {
  const parts = [
    ...(change.joining ?? []).map((line) => `+${line}`),
    ...(change.leaving ?? []).map((id) => `-server.${id}`),
  ];
  return parts.join(' ');
}
