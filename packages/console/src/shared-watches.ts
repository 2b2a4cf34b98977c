/**
 * Watches shared by every page that shows the same thing: made for a key on its first holder,
 * closed when its last holder lets go — how the console keeps one watch per lock path and per
 * fleet however many pages show it.
 */

/** What a shared watch is: something to close. */
export interface Closable {
  close(): void;
}

export class SharedWatches<T extends Closable> {
  private readonly entries = new Map<string, { readonly value: T; users: number }>();

  /**
   * @param make Makes the watch of a key (on its first holder).
   * @param closed Called after a key's watch was closed (its last holder let go).
   */
  constructor(
    private readonly make: (key: string) => T,
    private readonly closed: (key: string, value: T) => void = () => {},
  ) {}

  /** How many keys are watched. */
  get size(): number {
    return this.entries.size;
  }

  /** The watch of `key`, kept until the returned `release` is called (once counts). */
  hold(key: string): { readonly value: T; release(): void } {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { value: this.make(key), users: 0 };
      this.entries.set(key, entry);
    }
    entry.users += 1;
    const held = entry;
    let released = false;
    return {
      value: held.value,
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        if (held.users > 0 || this.entries.get(key) !== held) return;
        this.entries.delete(key);
        held.value.close();
        this.closed(key, held.value);
      },
    };
  }

  /** The watch of `key`, if it is held. */
  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  /** Every watch held now. */
  values(): T[] {
    return [...this.entries.values()].map((entry) => entry.value);
  }

  /** Closes every watch (the holders' `release` then does nothing). */
  close(): void {
    const entries = [...this.entries.values()];
    this.entries.clear();
    for (const entry of entries) entry.value.close();
  }
}
