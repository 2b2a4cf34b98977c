/**
 * One path a page lists: a lock (then watched by the `LockBook`: one persistent recursive
 * watch) or a folder (one child watch: its children counted, and inspected again when they
 * change, in case they become a lock's). A folder's subtree is never walked: what the console
 * watches grows with the rows on screen, not with the tree.
 */
import type { ZkClient } from '@zkrx/core';
import { inspect } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoalescedRead } from './coalesced-read';
import type { LockBook } from './lock-book';

export class PathProbe {
  /** `unknown` until the first look; `lock` once a lock was found there (it stays watched so). */
  mode: 'unknown' | 'lock' | 'folder' = 'unknown';
  /** Its children, as last counted (folders). */
  childCount = 0;
  problem: string | undefined;
  private children: Subscription | undefined;
  private release: (() => void) | undefined;
  private readonly looks: CoalescedRead<boolean>;

  constructor(
    client: ZkClient,
    private readonly book: LockBook,
    readonly path: string,
    private readonly onChange: () => void,
  ) {
    this.looks = new CoalescedRead(async () => (await inspect(client, path)) !== null, {
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
