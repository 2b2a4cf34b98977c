/**
 * What every page of one console shares: the client, the locks watched (`LockBook`), the fleets
 * watched (one `FleetWatch` per path, kept while a page shows it) and the history.
 */
import type { ZkClient } from '@zkrx/core';
import { FleetWatch } from './fleet-watch';
import { History } from './history';
import { LockBook } from './lock-book';
import { SharedWatches } from './shared-watches';

export class Hub {
  readonly history = new History();
  readonly book: LockBook;
  private readonly fleets: SharedWatches<FleetWatch>;

  constructor(readonly client: ZkClient) {
    this.book = new LockBook(client, this.history);
    this.fleets = new SharedWatches((path) => new FleetWatch(client, path, this.history));
  }

  /** The fleet at `path`, watched until the returned `release` is called. */
  holdFleet(path: string): { watch: FleetWatch; release: () => void } {
    const { value, release } = this.fleets.hold(path);
    return { watch: value, release };
  }

  /** Every fleet watched now. */
  watchedFleets(): FleetWatch[] {
    return this.fleets.values();
  }

  /** What the console watches now: lock paths (one persistent watch each) and fleets (one each). */
  counts(): { locks: number; fleets: number } {
    return { locks: this.book.size, fleets: this.fleets.size };
  }

  close(): void {
    this.fleets.close();
    this.book.close();
  }
}
