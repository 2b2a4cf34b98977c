/**
 * The client following its ensemble: on each (re)connection and each change of
 * `/zookeeper/config`, after a random delay, `sync` and read the configuration, and hand its
 * servers to the session (which rebalances, protocol/rebalance.ts) and to every later session.
 * What the client follows is `client.ensemble$`.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { Rc } from '../errors/errors';
import type { Logger } from '../transport/logger';
import type { SessionHandle } from '../transport/transport';
import {
  CONFIG_NODE,
  clientAddressOf,
  type EnsembleConfig,
  followedServers,
  formatAddress,
  parseEnsembleConfig,
  type ServerAddress,
} from './ensemble-config';

/** What the client follows: the servers it connects to, and the one its session is on. */
export interface EnsembleView {
  /**
   * The servers the client connects to (`host:port`, names as written): those of its connect
   * string until it has read the ensemble's configuration, those of the configuration after.
   */
  readonly hosts: readonly string[];
  /**
   * The version of the configuration `hosts` come from (hex, as `/zookeeper/config` writes
   * it: the zxid that made it); undefined while they are the connect string's.
   */
  readonly configVersion: string | undefined;
  /** The server the session is on (one of `hosts`, or as the transport names it); undefined while not connected. */
  readonly server: string | undefined;
  /**
   * How many times the client moved its session to another server by itself (planned moves:
   * rebalancing, its server leaving the configuration), never suspended.
   */
  readonly moves: number;
  /**
   * How many times a reconfiguration's leader hand-off dropped the connection and the session
   * was back on a server within the bound, never suspended.
   */
  readonly handOffs: number;
}

/** How the client follows the ensemble (`followEnsemble`), resolved. */
export interface FollowOptions {
  /** Read the configuration and follow it (false: the connect string for good). */
  readonly enabled: boolean;
  /** The longest random wait before reading a configuration (on a change, on a reconnection). */
  readonly maxDelayMs: number;
  /** Where this client reaches each server of the configuration (undefined: as written). */
  readonly address?: ((server: ServerAddress) => ServerAddress | undefined) | undefined;
}

/** What the follower needs of its client. */
export interface FollowerHost {
  /** The session handle calls go to (undefined once closed). */
  handle(): SessionHandle | undefined;
  readonly log: Required<Logger>;
  /** The client speaks TLS (it takes only TLS ports). */
  readonly tls: boolean;
  /** The transport's name, for messages. */
  readonly transportName: string;
}

/**
 * Follows `/zookeeper/config` for one client. The configuration is read after a random wait of
 * up to `maxDelayMs` — ZooKeeper's reconfiguration guide asks clients to wait a random short
 * time, so that a change does not move every client at once; the wait also spreads the
 * `sync`s, which go to the leader. The read is `sync` then `getConfig`, in one turn (a
 * session's requests are answered in order: the read sees the leader's configuration), with a
 * watch once the configuration is known to be dynamic (a static one cannot change while the
 * servers run: no watch is left on it). One watch at most: a read is made only when no other is
 * scheduled or in flight, and a change's event re-arms it by reading again.
 *
 * ## Example
 * ```ts
 * const follower = new EnsembleFollower(host, { enabled: true, maxDelayMs: 1_000 }, hosts, '/app');
 * follower.onConnected(); // reads the configuration within a second
 * console.log(follower.connectString()); // the servers followed, chroot kept
 * ```
 */
export class EnsembleFollower {
  /** Replays the latest view, then every change; completes on close. */
  readonly view$: Observable<EnsembleView>;
  private readonly subject: BehaviorSubject<EnsembleView>;
  private servers: readonly ServerAddress[];
  private version: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reading = false;
  /** A change came while a read was in flight: read again after it. */
  private again = false;
  private closed = false;
  private lastRefusal: string | undefined;
  private warnedTransport = false;
  /**
   * A TLS client saw its TLS connection (or its connect string) on a client port the
   * configuration names: the client ports take TLS (`client.portUnification`). Kept: the
   * server it was on may leave the configuration later.
   */
  private clientPortsTakeTls = false;
  private readonly initial: readonly ServerAddress[];
  /**
   * Whether the configuration is dynamic (a version but `0`: reconfiguration enabled), as last
   * read. Only a dynamic one can change while the servers run: only it is watched. A static one
   * (`version=0`) or a standalone server's (empty) is read again at each reconnection alone.
   */
  private dynamic: boolean | undefined;

  constructor(
    private readonly host: FollowerHost,
    private readonly options: FollowOptions,
    initial: readonly ServerAddress[],
    private readonly chroot: string,
  ) {
    this.servers = initial;
    this.initial = initial;
    this.subject = new BehaviorSubject<EnsembleView>({
      hosts: initial.map(formatAddress),
      configVersion: undefined,
      server: undefined,
      moves: 0,
      handOffs: 0,
    });
    this.view$ = this.subject.asObservable();
  }

  /** The latest view. */
  get view(): EnsembleView {
    return this.subject.value;
  }

  /** The connect string of a new session: the servers followed, the chroot kept. */
  connectString(): string {
    return this.servers.map(formatAddress).join(',') + this.chroot;
  }

  /** A session (re)connected on `server`: read the configuration (it may have changed meanwhile). */
  onConnected(server: string | undefined, readOnly: boolean): void {
    this.update({ server });
    // A read-only server's configuration may be that of a minority cut off from the quorum.
    if (!readOnly) this.schedule();
  }

  /** The connection was lost. */
  onDisconnected(): void {
    this.update({ server: undefined });
  }

  /**
   * The session is on `server` again without having been suspended (a planned move, or a
   * reconfiguration's hand-off ridden out): read the configuration, as after any reconnection.
   */
  onMoved(server: string | undefined, how: 'planned' | 'hand-off'): void {
    this.update(
      how === 'planned'
        ? { server, moves: this.view.moves + 1 }
        : { server, handOffs: this.view.handOffs + 1 },
    );
    this.schedule();
  }

  /** A watch event of the session: the configuration's means read it again. */
  onWatchEvent(path: string): void {
    if (path === CONFIG_NODE) this.schedule();
  }

  /** The client closed: no read any more; `view$` completes. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.subject.complete();
  }

  private update(change: Partial<EnsembleView>): void {
    if (this.closed) return;
    const view = { ...this.view, ...change };
    const same =
      view.server === this.view.server &&
      view.moves === this.view.moves &&
      view.handOffs === this.view.handOffs &&
      view.configVersion === this.view.configVersion &&
      view.hosts.join(',') === this.view.hosts.join(',');
    if (!same) this.subject.next(view);
  }

  private schedule(): void {
    if (!this.options.enabled || this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.read();
      },
      Math.round(Math.random() * this.options.maxDelayMs),
    );
  }

  private read(): void {
    const handle = this.host.handle();
    if (!handle || handle.isDead || this.closed) return;
    this.reading = true;
    this.again = false;
    // sync first: getConfig answers from the server's copy, which may lag behind the leader.
    handle.call('sync', { path: '/' }, () => {});
    this.getConfig(handle, this.dynamic === true);
  }

  private getConfig(handle: SessionHandle, watch: boolean): void {
    handle.call('getConfig', { watch }, (rc, value) => {
      if (this.closed) return;
      if (rc !== Rc.ok || !value) {
        this.reading = false;
        this.host.log.debug('could not read the ensemble configuration', { rc });
        // Failed on a lost connection: the reconnection reads again.
        if (this.again) this.schedule();
        return;
      }
      const text = value.data.toString('utf8');
      this.dynamic = parseEnsembleConfig(text).version !== '0';
      // Found dynamic without a watch (the first read): read it again with one, at once.
      if (this.dynamic && !watch) return this.getConfig(handle, true);
      this.reading = false;
      this.apply(handle, text);
      if (this.again) this.schedule();
    });
  }

  /** The configuration with each address mapped to where this client reaches it (`address`). */
  private reachable(config: EnsembleConfig): EnsembleConfig {
    const map = this.options.address;
    if (!map) return config;
    const mapped = (address: ServerAddress | undefined) => (address ? map(address) : undefined);
    return {
      ...config,
      servers: config.servers.map((entry) => {
        // A wildcard is resolved to the quorum host before it is mapped.
        const plain = clientAddressOf(entry);
        const secure = clientAddressOf(entry, true);
        return { ...entry, clientAddress: mapped(plain), secureClientAddress: mapped(secure) };
      }),
    };
  }

  private apply(handle: SessionHandle, text: string): void {
    const config = this.reachable(parseEnsembleConfig(text));
    const server = handle.server;
    const named = (address: ServerAddress) => formatAddress(address);
    if (this.host.tls && !this.clientPortsTakeTls) {
      const clientPorts = new Set(
        config.servers.flatMap((entry) =>
          entry.clientAddress ? [named(entry.clientAddress)] : [],
        ),
      );
      this.clientPortsTakeTls =
        (server !== undefined && clientPorts.has(server)) ||
        this.initial.some((address) => clientPorts.has(named(address)));
    }
    const chosen = followedServers(config, {
      tls: this.host.tls,
      clientPortsTakeTls: this.clientPortsTakeTls,
    });
    if (chosen.servers === undefined) {
      // An ensemble without reconfiguration may name no client address: nothing to follow.
      if (chosen.reason !== this.lastRefusal && config.servers.length > 0) {
        this.lastRefusal = chosen.reason;
        this.host.log.info(`not following the ensemble's configuration: ${chosen.reason}`);
      }
      return;
    }
    this.lastRefusal = undefined;
    if (chosen.skipped.length > 0) {
      this.host.log.debug(
        `the ensemble's configuration names no address for server ${chosen.skipped.join(', ')}: not connecting there`,
      );
    }
    const hosts = chosen.servers.map(formatAddress);
    if (config.version === this.version && hosts.join(',') === this.view.hosts.join(',')) return;
    this.servers = chosen.servers;
    this.version = config.version;
    if (handle.updateServers) {
      handle.updateServers(chosen.servers);
    } else if (!this.warnedTransport) {
      this.warnedTransport = true;
      this.host.log.warn(
        `the ${this.host.transportName} transport cannot change servers: the ensemble's configuration is used from the next session on`,
      );
    }
    this.update({ hosts, configVersion: config.version });
  }
}
