/**
 * Builds the `zoo.cfg` of a test server or of one ensemble member. Pure functions: settings in,
 * `key=value` lines out, with the settings every zkrx test server needs.
 */

/** The settings of one server's `zoo.cfg`. */
export interface ZooCfgSettings {
  dataDir: string;
  clientPort: number;
  /** Loopback address the client port binds; `127.0.0.1`. */
  host: string;
  tickTime: number;
  minSessionTimeoutMs?: number;
  maxSessionTimeoutMs?: number;
  /** The members of an ensemble (absent for a standalone server). */
  quorum?: readonly QuorumMember[];
  /**
   * Dynamic reconfiguration (`reconfigEnabled`): the members' lines then carry their role and
   * client address, which the configuration (`/zookeeper/config`) shows clients, and no
   * `clientPort` line is written.
   */
  reconfigEnabled?: boolean;
  /** Last word: any key, overriding the defaults. */
  extraConfig?: Readonly<Record<string, string>>;
}

/** One member of an ensemble, as its `server.N` line names it. */
export interface QuorumMember {
  id: number;
  quorumPort: number;
  electionPort: number;
  /** Its host (quorum and client address); the server's `host` by default. */
  host?: string;
  /** `participant` by default. */
  role?: 'participant' | 'observer';
  /** Its client port (written only with `reconfigEnabled`). */
  clientPort?: number;
}

/**
 * The `server.N` value of a member: `host:quorumPort:electionPort`, and with a client port
 * `:role;host:clientPort` (the dynamic configuration's form).
 *
 * ## Example
 *
 * ```ts
 * console.log(serverLine({ id: 1, quorumPort: 2888, electionPort: 3888, clientPort: 2181 }, '127.0.0.1'));
 * // Output: 127.0.0.1:2888:3888:participant;127.0.0.1:2181
 * ```
 *
 * @param member The member.
 * @param defaultHost The host when the member names none.
 * @return The line's value.
 */
export function serverLine(member: QuorumMember, defaultHost: string): string {
  const host = member.host ?? defaultHost;
  const quorum = `${host}:${member.quorumPort}:${member.electionPort}`;
  if (member.clientPort === undefined) return quorum;
  return `${quorum}:${member.role ?? 'participant'};${host}:${member.clientPort}`;
}

/**
 * Renders a `zoo.cfg`: 4lw whitelisted, admin server off, no connection limit, loopback only.
 *
 * ## Example
 *
 * ```ts
 * console.log(renderZooCfg({ dataDir: '/tmp/zk/data', clientPort: 2181, host: '127.0.0.1', tickTime: 500 }));
 * // Output: tickTime=500 ... clientPortAddress=127.0.0.1 ... 4lw.commands.whitelist=*
 * ```
 *
 * @param settings The server's settings.
 * @return The file's text.
 */
export function renderZooCfg(settings: ZooCfgSettings): string {
  const dynamic = settings.reconfigEnabled === true && settings.quorum !== undefined;
  const entries: Record<string, string> = {
    tickTime: String(settings.tickTime),
    dataDir: settings.dataDir,
    ...(dynamic
      ? {}
      : { clientPort: String(settings.clientPort), clientPortAddress: settings.host }),
    maxClientCnxns: '0',
    'admin.enableServer': 'false',
    '4lw.commands.whitelist': '*',
  };
  if (settings.minSessionTimeoutMs !== undefined) {
    entries.minSessionTimeout = String(settings.minSessionTimeoutMs);
  }
  if (settings.maxSessionTimeoutMs !== undefined) {
    entries.maxSessionTimeout = String(settings.maxSessionTimeoutMs);
  }
  if (settings.quorum) {
    // initLimit/syncLimit are in ticks: 20 and 10 ticks of 500 ms leave room for slow CI machines.
    entries.initLimit = '20';
    entries.syncLimit = '10';
    // A one-member "ensemble" is only a quorum if standalone mode is turned off; so is one that
    // reconfiguration may shrink to one participant.
    if (settings.quorum.length === 1 || dynamic) entries.standaloneEnabled = 'false';
    entries.reconfigEnabled = dynamic ? 'true' : 'false';
    for (const member of settings.quorum) {
      entries[`server.${member.id}`] = serverLine(
        dynamic ? member : { ...member, clientPort: undefined },
        settings.host,
      );
    }
  }
  Object.assign(entries, settings.extraConfig);
  return `${Object.entries(entries)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')}\n`;
}
