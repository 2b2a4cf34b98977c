/**
 * How many of a member's item locks may be on their way into their queues at once: a window
 * that grows while ZooKeeper answers quickly and halves when it answers slowly, as TCP's
 * congestion window does. Pure (the clock is given): the engine (partition-engine.ts) counts
 * what it started and tells what came back.
 *
 * Why: a lock's first steps (its node's create, the listing pipelined behind it, a container
 * made first at a fleet's start) are requests the server answers in order per session, with the
 * session's pings behind them. A thousand members each starting 128 acquisitions at once put
 * half a million requests in the server's queues: minutes of work on a busy machine, while the
 * client drops any connection whose requests go unanswered for 5/6 of the session timeout — so
 * every connection dropped, every pending request failed, every session came back to do it all
 * again, and the fleet never balanced. With this window the requests in flight stay what the
 * server answers in about `targetMs`, whatever the number of members and processes: each member
 * sees the same server's delay and backs off with the others.
 *
 * Liveness only: what is taken, and when, changes; an item is still owned only once its lock is
 * held (partition-engine.ts, "IN ONLY WHILE HELD").
 */

/** The most acquisitions a member ever has on their way at once (what a lock in waiting costs stays bounded). */
export const MAX_WINDOW = 128;
/** Where a window starts: a share of a few items is taken at once, a large one ramps up. */
export const START_WINDOW = 8;

export class TakeWindow {
  private size = START_WINDOW;
  /** When the window was last halved (a burst of late answers halves it once a `targetMs`). */
  private cutAt = Number.NEGATIVE_INFINITY;

  /**
   * @param targetMs The slowest answer that does not count as congestion: a tenth of the session
   *   timeout by default (the engine's), far inside the 5/6 after which a connection is dropped.
   */
  constructor(private readonly targetMs: number) {}

  /** How many acquisitions may be on their way now. */
  get limit(): number {
    return this.size;
  }

  /**
   * An acquisition started at `startedAt` reached its queue (its node created) at `now`: a fast
   * answer opens the window by one (so it doubles in a round trip), a slow one halves it.
   */
  answered(startedAt: number, now: number): void {
    if (now - startedAt <= this.targetMs) {
      this.size = Math.min(MAX_WINDOW, this.size + 1);
    } else this.congested(now);
  }

  /** The connection was lost under an acquisition, or an answer came late: halved (once a `targetMs`). */
  congested(now: number): void {
    if (now - this.cutAt < this.targetMs) return;
    this.cutAt = now;
    this.size = Math.max(1, Math.floor(this.size / 2));
  }
}
