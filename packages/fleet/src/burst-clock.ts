/**
 * When a coordinator writes after membership changes: changes closer than `BURST_QUIET_MS` to
 * each other are a burst (a fleet starting, a deploy; a new item set stated, which every member
 * states within moments), and the assignment is written once the burst is that quiet, or
 * `BURST_LONGEST_MS` after it began, whichever is first. A fleet's first assignment (none
 * written yet: its members joining one after another over seconds) waits as long as
 * `FIRST_LONGEST_MS` at most: items taken by the first few would move again to each that comes
 * after. The bounds are what keeps a fleet whose joins never calm working at all.
 */

export const BURST_QUIET_MS = 150;
export const BURST_LONGEST_MS = 3_000;
export const FIRST_LONGEST_MS = 10_000;

/**
 * The burst state of one coordinator's term, on the times it is given (ms).
 *
 * ## Example
 * ```ts
 * const clock = new BurstClock();
 * clock.changed(0, false);
 * console.log(clock.waitMs(0, true), clock.waitMs(200, true));
 * // Output: 150 0
 * ```
 */
export class BurstClock {
  private lastChange = Number.NEGATIVE_INFINITY;
  private burstStart = 0;
  private inBurst = false;

  /** A membership change at `now`; `newSet`: a member states another item set than it did. */
  changed(now: number, newSet: boolean): void {
    const wasQuiet = now - this.lastChange >= BURST_QUIET_MS;
    if (wasQuiet) this.burstStart = now;
    this.inBurst =
      newSet || !wasQuiet || (this.inBurst && now - this.burstStart < BURST_LONGEST_MS);
    this.lastChange = now;
  }

  /** An assignment was written: the burst is over. */
  ended(): void {
    this.inBurst = false;
  }

  /**
   * How long to wait at `now` before writing (0: write now); `first`: no assignment has been
   * written yet by any coordinator.
   */
  waitMs(now: number, first: boolean): number {
    if (!first && !this.inBurst) return 0;
    const quiet = this.lastChange + BURST_QUIET_MS - now;
    const longest = this.burstStart + (first ? FIRST_LONGEST_MS : BURST_LONGEST_MS) - now;
    return Math.max(0, Math.min(quiet, longest));
  }
}
