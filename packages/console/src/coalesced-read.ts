/**
 * A read run on demand, coalesced: one in flight, at most one more queued behind it, however
 * many changes ask for it meanwhile — what the console's live models and the CLI's `--watch`
 * views (`watch-screen.ts`) read ZooKeeper with.
 */

/** What a coalesced read hands each result to. */
export interface CoalescedTarget<T> {
  /** A read's result to show. */
  take(value: T): void;
  /** The read failed (it is tried again on the next request). */
  fail(error: unknown): void;
}

/** How a {@link CoalescedRead} treats a read that a change may have torn. */
export interface CoalescedReadOptions {
  /**
   * A read during which a change was asked for again is torn: ZooKeeper sends a change's
   * notification before any reply that shows it, so the read may show that change in part.
   * Such a read is thrown away and read again at once, up to this many in a row (changes that
   * never stop still show); the first read is taken at once, torn or not (the read that follows
   * corrects it). Default 0: every read is taken.
   */
  readonly maxTornReads?: number;
}

/**
 * Reads on demand with one in flight and at most one more queued (`request()`), each result
 * handed to its target's `take` and each failure to `fail`; `close()` stops it (a read in flight
 * is then dropped, not handed on).
 */
export class CoalescedRead<T> {
  private running = false;
  private again = false;
  private closed = false;
  private taken = false;
  private torn = 0;
  private readonly maxTornReads: number;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly target: CoalescedTarget<T>,
    options: CoalescedReadOptions = {},
  ) {
    this.maxTornReads = options.maxTornReads ?? 0;
  }

  /** A read is in flight (or queued). */
  get busy(): boolean {
    return this.running;
  }

  /** Asks for a read: starts one, or queues one behind the read in flight. */
  request(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.run();
  }

  /** No more reads; a read in flight is dropped when it ends. */
  close(): void {
    this.closed = true;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        try {
          const value = await this.read();
          if (this.closed) break;
          if (this.again && this.taken && this.torn < this.maxTornReads) {
            this.torn += 1;
            continue;
          }
          this.torn = 0;
          this.taken = true;
          this.target.take(value);
        } catch (error) {
          if (!this.closed) this.target.fail(error);
        }
      } while (this.again && !this.closed);
    } finally {
      this.running = false;
    }
  }
}
