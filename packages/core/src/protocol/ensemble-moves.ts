/**
 * A session following its ensemble: the server list replaced by the configuration's, the
 * rebalancing moves that follow (rebalance.ts, planned-move.ts), and the grace that keeps a
 * session known alive from being reported `suspended` while it comes back on a server — after a
 * planned move's reattach, or through a reconfiguration's leader hand-off.
 */
import type { ServerAddress } from '../ensemble/ensemble-config';
import { coreTelemetry } from '../telemetry/telemetry';
import type { Logger } from '../transport/logger';
import { type Connection, type Endpoint, formatEndpoint } from './connection';
import type { HostList } from './hosts';
import type { RequestPipeline } from './pipeline';
import { MIN_MOVE_MS, type MoveSession, moveBoundMs, PlannedMove } from './planned-move';
import { planRebalance } from './rebalance';

/** What the moves need of their session. */
export interface MovesSession
  extends Omit<MoveSession, 'isOn' | 'ended' | 'addressesOf' | 'log' | 'pipeline'> {
  readonly log: Required<Logger>;
  readonly pipeline: RequestPipeline;
  readonly hosts: HostList;
  /** The connection the session is on while connected read-write (else undefined). */
  current(): Connection | undefined;
  /** A grace ran out before the session was back on a server: report `suspended` now. */
  graceOver(what: string): void;
}

/** What brought the session back on a server without a suspension. */
export type MoveKind = 'planned' | 'hand-off';

/** Counts a planned move's or a hand-off's outcome (`zkrx.ensemble.moves`). */
function countMove(outcome: 'moved' | 'hand-off' | 'suspended' | 'stayed' | 'abandoned'): void {
  const telemetry = coreTelemetry();
  telemetry.moves.add(1, telemetry.moveAttributes(outcome));
}

/**
 * The ensemble side of one session.
 *
 * **A reconfiguration's hand-off.** ZooKeeper restarts every server's client service when its
 * leader changes — a follower's `Learner.shutdown` closes all its client connections — and a
 * reconfiguration that removes the leader (every rolling replacement does, once) hands its role
 * over that way: every client of every server loses its connection for a moment (about half a
 * second here). No move of the client's own can avoid that, so for a third of the session
 * timeout after the configuration changed (its watch fired, or a new list was followed) — and
 * whenever the
 * server lost is one the configuration no longer names (its client had not moved off yet when
 * the operator stopped it) — a lost connection is given the bound of a planned move to come back
 * (planned-move.ts: it ends before the server could expire the session, with the margin a lost
 * connection leaves) before it is reported `suspended`. Otherwise a lost connection is reported
 * at once, as ever.
 *
 * ## Example
 * ```ts
 * const moves = new EnsembleMoves(session);
 * moves.update([{ host: 'zk-4', port: 2181 }, { host: 'zk-5', port: 2181 }]);
 * ```
 */
export class EnsembleMoves {
  /** A planned move to another server, before its reattach. */
  private move: PlannedMove | undefined;
  /** Trying again to leave a server that left the list (its planned move found no server). */
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** Until the session is back on a server: when it must be, or be reported suspended. */
  private grace: { what: string; kind: MoveKind; timer: ReturnType<typeof setTimeout> } | undefined;
  /** performance.now() until which a lost connection may be a reconfiguration's hand-off. */
  private reconfiguringUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly session: MovesSession) {}

  /**
   * The servers to connect to from now on. Connected read-write, the session moves when the
   * Java client's rule says so (rebalance.ts), as a planned move; otherwise the next attempts
   * use the new list.
   */
  update(servers: readonly ServerAddress[]): void {
    const { hosts, log } = this.session;
    if (servers.length === 0) return;
    const previous = [...hosts.list];
    const next = servers.map(({ host, port }) => ({ host, port }));
    const unchanged =
      next.length === previous.length &&
      next.every((host) => previous.some((known) => hosts.same(known, host)));
    if (unchanged) return;
    this.reconfiguring();
    hosts.replace(next);
    log.info(
      `following the ensemble: ${next.map(formatEndpoint).join(',')} (was ${previous.map(formatEndpoint).join(',')})`,
      { sessionId: this.session.sessionId() },
    );
    this.rebalance(previous);
  }

  /**
   * The ensemble's configuration changed (or is changing): see the class's comment. A leader's
   * hand-off drops the connections right after the change reaches the servers (tens of ms
   * after its notification, in our runs): the window is a third of the session timeout.
   */
  reconfiguring(): void {
    this.reconfiguringUntil = performance.now() + this.session.sessionTimeoutMs() / 3;
  }

  /**
   * The session's connection was lost: during a reconfiguration, starts a grace for it to come
   * back (true); otherwise (or with too little of the session's time left) false: report it.
   */
  rideThrough(lost: Connection): boolean {
    this.move?.cancel();
    this.move = undefined;
    const now = performance.now();
    const { hosts } = this.session;
    // Its server had left the configuration (its move had not made it yet): the server's stop
    // is the reconfiguration's too.
    const left = !hosts.list.some((host) => hosts.names(host, lost.endpoint));
    if (now >= this.reconfiguringUntil && !left) return false;
    const bound = moveBoundMs({
      now,
      heardAt: this.session.pipeline.heardAt,
      timeoutMs: this.session.sessionTimeoutMs(),
    });
    if (bound < MIN_MOVE_MS) return false;
    this.session.log.info(
      `the ensemble is being reconfigured: reconnecting within ${Math.round(bound)} ms before the session counts as suspended`,
      { sessionId: this.session.sessionId() },
    );
    this.startGrace(
      now + bound,
      `reconnecting after ${lost.describe()} dropped the connection`,
      'hand-off',
    );
    return true;
  }

  /**
   * The session must be back on a server by `deadline`, or be reported suspended then. A
   * deadline already past (a stall of ours between the bound's reckoning and the switch ate it)
   * is reported at once: what the session asks for now is asked after the bound, so no answer
   * can make it in time — not even one read before the grace's timer is looked at.
   */
  startGrace(deadline: number, what: string, kind: MoveKind = 'planned'): void {
    clearTimeout(this.grace?.timer);
    this.grace = undefined;
    if (deadline <= performance.now()) {
      countMove('suspended');
      this.session.graceOver(what);
      return;
    }
    const timer = setTimeout(
      // The answer may be in the socket, unread behind a stall of ours: look after the poll.
      () =>
        setImmediate(() => {
          if (this.grace?.timer !== timer) return;
          this.grace = undefined;
          countMove('suspended');
          this.session.graceOver(what);
        }),
      Math.max(0, deadline - performance.now()),
    );
    this.grace = { what, kind, timer };
  }

  /**
   * The session is on a server again: what the grace that was running was for (it never looked
   * lost), or undefined.
   */
  endGrace(): MoveKind | undefined {
    const grace = this.grace;
    if (!grace) return undefined;
    clearTimeout(grace.timer);
    this.grace = undefined;
    countMove(grace.kind === 'planned' ? 'moved' : 'hand-off');
    return grace.kind;
  }

  /** The session stops connecting (closed, dead): nothing more happens. */
  stop(): void {
    this.move?.cancel();
    this.move = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
    clearTimeout(this.grace?.timer);
    this.grace = undefined;
  }

  /** Moves if the rule says so, from the list `previous` to the current one. */
  private rebalance(previous: readonly Endpoint[]): void {
    const { hosts, log } = this.session;
    this.move?.cancel();
    this.move = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
    const connection = this.session.current();
    if (!connection) return;
    const endpoint = connection.endpoint;
    const current = previous.find((host) => hosts.names(host, endpoint)) ?? {
      host: endpoint.name ?? endpoint.host,
      port: endpoint.port,
    };
    const plan = planRebalance({
      previous,
      next: hosts.list,
      current,
      same: (a, b) => hosts.same(a, b),
      random: Math.random,
    });
    if (!plan.move) return;
    log.info(
      `moving from ${connection.describe()} (${plan.why === 'removed' ? 'it left the ensemble' : 'servers were added'}): trying ${plan.order.map(formatEndpoint).join(', ')}`,
      { sessionId: this.session.sessionId() },
    );
    const move = new PlannedMove(
      {
        ...this.session,
        isOn: (candidate) => this.session.current() === candidate,
        addressesOf: (host) => hosts.addressesOf(host),
        reattach: (from, to, deadline) => {
          this.move = undefined;
          this.session.reattach(from, to, deadline);
        },
        ended: (outcome) => this.ended(move, outcome),
      },
      connection,
      plan.order,
    );
    this.move = move;
    move.start();
  }

  /** A planned move found no server: if the session's server left the list, try again later. */
  private ended(move: PlannedMove, outcome: 'stayed' | 'abandoned'): void {
    if (this.move === move) this.move = undefined;
    countMove(outcome);
    const { hosts } = this.session;
    const endpoint = this.session.current()?.endpoint;
    if (outcome !== 'stayed' || !endpoint) return;
    if (hosts.list.some((host) => hosts.names(host, endpoint))) return;
    this.retry = setTimeout(
      () => {
        this.retry = undefined;
        this.rebalance(hosts.list);
      },
      this.session.attemptTimeoutMs() * (1 + Math.random()),
    );
  }
}
