/**
 * A read run on demand, coalesced: one in flight, at most one more queued behind it, however
 * many changes ask for it meanwhile — what every live model of the console reads ZooKeeper with.
 */

/** What a coalesced read hands each result to. */
export interface CoalescedTarget<T> {
  /**
   * A read's result. `torn`: a change was notified while it ran (ZooKeeper sends a change's
   * notification before any reply that shows it, so the read may show that change in part); a
   * read follows it at once.
   */
  take(value: T, torn: boolean): void;
  /** The read failed (it is tried again on the next request). */
  fail(error: unknown): void;
}

export class CoalescedRead<T> {
  private running = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly target: CoalescedTarget<T>,
  ) {}

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
          if (!this.closed) this.target.take(value, this.again);
        } catch (error) {
          if (!this.closed) this.target.fail(error);
        }
      } while (this.again && !this.closed);
    } finally {
      this.running = false;
    }
  }
}
