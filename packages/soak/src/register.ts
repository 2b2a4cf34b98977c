/**
 * The fenced register: the resource the workers' holds protect. It remembers the highest
 * fencing token it has accepted per resource and refuses a write that carries a lower one (a
 * holder that lost its lock without knowing it). It lives in the coordinator, so its order of
 * writes is the one order every worker's write is judged in.
 */

/** One write as the register saw it. */
export interface RegisterWrite {
  readonly resource: string;
  readonly token: number;
  readonly holdId: string;
  readonly worker: number;
  /** When the register applied it (coordinator clock). */
  readonly at: number;
  readonly accepted: boolean;
  /** The highest token accepted on the resource before this write. */
  readonly highestBefore: number | undefined;
}

/**
 * A register per resource that accepts a write only if its token is at least the highest it
 * has accepted (equal: the same holder writing again).
 *
 * ## Example
 *
 * ```ts
 * const register = new FencedRegister();
 * register.write({ resource: '/r', token: 7, holdId: 'a', worker: 1, at: 0 }); // true
 * register.write({ resource: '/r', token: 5, holdId: 'b', worker: 2, at: 1 }); // false: stale
 * ```
 */
export class FencedRegister {
  private readonly highest = new Map<string, number>();
  /** Every write in the order applied. */
  readonly log: RegisterWrite[] = [];

  /**
   * Applies one write.
   *
   * @param write The resource, token and writer.
   * @return Whether it was accepted.
   */
  write(write: Omit<RegisterWrite, 'accepted' | 'highestBefore'>): boolean {
    const highestBefore = this.highest.get(write.resource);
    const accepted = highestBefore === undefined || write.token >= highestBefore;
    if (accepted) this.highest.set(write.resource, write.token);
    this.log.push({ ...write, accepted, highestBefore });
    return accepted;
  }
}
