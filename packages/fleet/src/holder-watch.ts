/**
 * Who holds one item's lock, kept current: a children watch on the item's lock path, and one
 * read of each node that comes to the front of its queue (its owning session never changes).
 */
import { isZkError, joinPath, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { sortChildren } from '@zkrx/lock/recipe';
import type { Subscription } from 'rxjs';

/** The node first in an item's lock queue: its holder. */
export interface Holder {
  readonly node: string;
  /** The session owning it (hex). */
  readonly sessionId: string;
  /** Its creation's zxid: the holder's fencing token. */
  readonly czxid: number;
}

/**
 * The holder of the lock at `path`: `undefined` until first known, then the holder or `null`
 * (nobody). While the holder of a new first node is being read the last one known stays: it is a
 * hint for the assignment, never a decision about who holds (the lock makes those).
 */
export class HolderWatch {
  holder: Holder | null | undefined;
  private readonly subscription: Subscription;
  private readonly known = new Map<string, Holder>();
  /** The listing being read for; a read for an older listing is dropped. */
  private generation = 0;
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly changed: () => void,
    private readonly failed: (error: unknown) => void,
  ) {
    this.subscription = client.watchChildren(path).subscribe({
      next: (names) => this.onListing(names),
      error: (error: unknown) => {
        if (!this.stopped && !isZkError(error, ZkErrorCode.ClientClosed)) this.failed(error);
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.subscription.unsubscribe();
  }

  private onListing(names: readonly string[]): void {
    if (this.stopped) return;
    const generation = ++this.generation;
    const first = sortChildren(names).find((child) => child.kind !== 'other');
    for (const name of this.known.keys()) if (!names.includes(name)) this.known.delete(name);
    if (!first) return this.set(null);
    const cached = this.known.get(first.name);
    if (cached) return this.set(cached);
    const node = joinPath(this.path, first.name);
    void this.read(node, first.name, generation);
  }

  /** Reads the holder's node, again after a lost connection, until read, outdated or stopped. */
  private async read(node: string, name: string, generation: number): Promise<void> {
    const current = () => !this.stopped && generation === this.generation;
    for (;;) {
      try {
        const stat = await this.client.promises.exists(node);
        if (!current()) return;
        // Gone already: the watch brings the next listing.
        if (!stat) return;
        const holder = { node, sessionId: stat.ephemeralOwner, czxid: stat.czxid };
        this.known.set(name, holder);
        this.set(holder);
        return;
      } catch (error) {
        if (!current() || isZkError(error, ZkErrorCode.ClientClosed)) return;
        if (
          !isZkError(error) ||
          !(error.isRetryable || error.code === ZkErrorCode.SessionExpired)
        ) {
          this.failed(error);
          return;
        }
      }
      await this.client.connected().catch(() => {});
      if (!current()) return;
    }
  }

  private set(holder: Holder | null): void {
    const before = this.holder;
    this.holder = holder;
    if (before === undefined || before?.node !== holder?.node) this.changed();
  }
}
