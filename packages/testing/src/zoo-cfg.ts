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
  quorum?: readonly { id: number; quorumPort: number; electionPort: number }[];
  /** Last word: any key, overriding the defaults. */
  extraConfig?: Readonly<Record<string, string>>;
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
  const entries: Record<string, string> = {
    tickTime: String(settings.tickTime),
    dataDir: settings.dataDir,
    clientPort: String(settings.clientPort),
    clientPortAddress: settings.host,
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
    // A one-member "ensemble" is only a quorum if standalone mode is turned off.
    if (settings.quorum.length === 1) entries.standaloneEnabled = 'false';
    entries.reconfigEnabled = 'false';
    for (const member of settings.quorum) {
      entries[`server.${member.id}`] =
        `${settings.host}:${member.quorumPort}:${member.electionPort}`;
    }
  }
  Object.assign(entries, settings.extraConfig);
  return `${Object.entries(entries)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')}\n`;
}
