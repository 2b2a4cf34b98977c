/**
 * One path a page lists: a lock (then watched by the `LockBook`: one persistent recursive
 * watch) or a folder (one child watch: its children counted, and inspected again when they
 * change, in case they become a lock's). A folder's subtree is never walked: what the console
 * watches grows with the rows on screen, not with the tree.
 */
import type { Stat, ZkClient } from '@zkrx/core';
import { type InspectReads, inspect } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoalescedRead } from './coalesced-read';
import type { LockBook } from './lock-book';

/** The Stat of a listing taken from a child watch (which gives names only): never read. */
const LISTED: Stat = {
  czxid: 0,
  mzxid: 0,
  pzxid: 0,
  ctime: 0,
  mtime: 0,
  version: 0,
  cversion: 0,
  aversion: 0,
  ephemeralOwner: '0',
  dataLength: 0,
  numChildren: 0,
};

export class PathProbe {
  /** `unknown` until the first look; `lock` once a lock was found there (it stays watched so). */
  mode: 'unknown' | 'lock' | 'folder' = 'unknown';
  /** Its children, as last counted (folders). */
  childCount = 0;
  problem: string | undefined;
  private children: Subscription | undefined;
  private release: (() => void) | undefined;
  private readonly looks: CoalescedRead<boolean>;
  /** The children as the child watch last gave them. */
  private names: readonly string[] | undefined;

  constructor(
    client: ZkClient,
    private readonly book: LockBook,
    readonly path: string,
    private readonly onChange: () => void,
  ) {
    // The path's listing is the one its child watch just gave (no second listing, no round
    // trip before the look: a row shows one round trip sooner); every other read is the
    // client's. The listing's Stat is a placeholder: `inspect` reads it only for a lock's
    // `pzxid`, and the probe takes nothing from the lock but that one is there.
    const reads: InspectReads = {
      get sessionId() {
        return client.sessionId;
      },
      promises: {
        get: (node) => client.promises.get(node),
        childrenWithStat: (node) =>
          node === path && this.names !== undefined
            ? Promise.resolve({ children: [...this.names], stat: LISTED })
            : client.promises.childrenWithStat(node),
      },
    };
    this.looks = new CoalescedRead(async () => (await inspect(reads, path)) !== null, {
      take: (isLock) => {
        this.problem = undefined;
        if (isLock) this.becomeLock();
        else this.mode = 'folder';
        this.onChange();
      },
      fail: (error) => {
        this.problem = `could not read ${path}: ${(error as Error).message}`;
        this.onChange();
      },
    });
    this.children = client.watchChildren(path).subscribe({
      next: (names) => {
        this.names = names;
        this.childCount = names.length;
        this.looks.request();
      },
      error: (error: unknown) => {
        this.problem = `watching ${path} failed: ${(error as Error).message}`;
        this.onChange();
      },
    });
  }

  close(): void {
    this.looks.close();
    this.children?.unsubscribe();
    this.release?.();
  }

  private becomeLock(): void {
    if (this.mode === 'lock') return;
    this.mode = 'lock';
    this.children?.unsubscribe();
    this.children = undefined;
    this.release = this.book.hold(this.path);
  }
}
