/**
 * What every page of one console shares: the client, the locks watched (`LockBook`), the fleets
 * watched (one `FleetWatch` per path, kept while a page shows it) and the history.
 */
import type { ZkClient } from '@zkrx/core';
import { FleetWatch } from './fleet-watch';
import { History } from './history';
import { LockBook } from './lock-book';

interface FleetEntry {
  readonly watch: FleetWatch;
  users: number;
}

export class Hub {
  readonly history = new History();
  readonly book: LockBook;
  private readonly fleets = new Map<string, FleetEntry>();

  constructor(readonly client: ZkClient) {
    this.book = new LockBook(client, this.history);
  }

  /** The fleet at `path`, watched until the returned `release` is called. */
  holdFleet(path: string): { watch: FleetWatch; release: () => void } {
    let entry = this.fleets.get(path);
    if (!entry) {
      entry = { watch: new FleetWatch(this.client, path, this.history), users: 0 };
      this.fleets.set(path, entry);
    }
    entry.users += 1;
    const held = entry;
    let released = false;
    return {
      watch: held.watch,
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        if (held.users > 0) return;
        held.watch.close();
        this.fleets.delete(path);
      },
    };
  }

  /** Every fleet watched now. */
  watchedFleets(): FleetWatch[] {
    return [...this.fleets.values()].map((entry) => entry.watch);
  }

  /** What the console watches now: lock paths (one persistent watch each) and fleets (one each). */
  counts(): { locks: number; fleets: number } {
    return { locks: this.book.size, fleets: this.fleets.size };
  }

  close(): void {
    for (const entry of this.fleets.values()) entry.watch.close();
    this.fleets.clear();
    this.book.close();
  }
}
