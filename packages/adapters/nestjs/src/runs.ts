/**
 * Runs still going (promises of decorated methods), kept in view so that the application's
 * shutdown can wait for them before it gives up what they hold.
 */
export class Runs {
  private readonly running = new Set<Promise<void>>();

  /** Keeps `run` in view until it settles (either way). */
  hold(run: PromiseLike<unknown>): void {
    const settled = Promise.resolve(run).then(
      () => {},
      () => {},
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
  }

  /** Resolves once every run held, including those held meanwhile, has settled. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
