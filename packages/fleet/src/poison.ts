/**
 * Poison reports: a member whose lock on an item fails for good reports the item under
 * `<path>/poison/<item>` (an ephemeral node holding who found it and why), keeps trying to write
 * a report it could not write, tries the item itself again now and then, and withdraws the
 * report once the item can be locked again. And the codec of a report.
 */
import { isZkError, joinPath, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { tryAcquire } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { errorSummary, PartitionProblemError } from './errors';
import { readRecord } from './json-record';
import { keepWatching } from './kept-watch';
import { itemPath, poisonPath } from './options';

/** An item whose lock failed for good, as reported by the member that tried it. */
export interface PoisonedItem {
  /** The member that found it. */
  readonly member: string;
  /** The error's code (`NoAuth`, `LockConflict`, ...). */
  readonly code: string;
  /** The error's message (at most 200 characters). */
  readonly message: string;
}

/** The longest message a report keeps. */
const MESSAGE_CHARACTERS = 200;

/** What a report says: who found the item, and the error. */
export function poisonOf(member: string, error: unknown): PoisonedItem {
  return { member, ...errorSummary(error, MESSAGE_CHARACTERS) };
}

/** The data of a poison report. */
export function encodePoisonReport(report: PoisonedItem): Buffer {
  return Buffer.from(
    JSON.stringify({ member: report.member, code: report.code, message: report.message }),
    'utf8',
  );
}

/** A poison report read back; undefined when it is not one. */
export function decodePoisonReport(data: Buffer): PoisonedItem | undefined {
  return readRecord(data, { member: 'string', code: 'string', message: 'string' });
}

/** Two reports alike. */
export function samePoison(a: PoisonedItem, b: PoisonedItem): boolean {
  return a.member === b.member && a.code === b.code && a.message === b.message;
}

/** The first wait before a report is written again, or an item tried again (ms); doubled each time. */
const FIRST_RETRY_MS = 1_000;
/** The longest such wait. */
const LAST_RETRY_MS = 60_000;

/** One item poisoned here. */
interface Entry {
  readonly report: PoisonedItem;
  /** `writing`: the create is in flight; `written`: our node, or another member's, is there. */
  state: 'writing' | 'written' | 'unwritten';
  /** Our node (when we wrote it) and its session. */
  node: { readonly path: string; readonly sessionId: string } | undefined;
  /** Whether the coordinator's assignment lists the item as poison. */
  listed: boolean;
  /** When to write the report again (unwritten) or try the item again (written). */
  dueAt: number;
  delay: number;
  trying: boolean;
}

/** What the reports tell the partition. */
export interface PoisonEvents {
  /** The items poisoned here changed (one added, cleared, or its report written). */
  changed(): void;
  /** Something the member goes on through: a report not written (written again later). */
  problem(error: PartitionProblemError): void;
  /** A problem of `item` is over (its report is written, or it is no longer poison). */
  resolved(item: string): void;
}

const ignore = () => {};

/**
 * This member's poison items. Each is reported (an ephemeral node under `<path>/poison`); a
 * report that cannot be written (NoAuth on `<path>/poison`, no connection) is written again after
 * 1 s, 2 s, ... up to a minute, and told to `problem` each time. Each item is also tried again on
 * that schedule (a lock that is taken and at once released, never an ownership): once it can be
 * locked, its report is withdrawn and the item is for the assignment again.
 */
export class PoisonReports {
  private readonly entries = new Map<string, Entry>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    private readonly events: PoisonEvents,
  ) {}

  has(item: string): boolean {
    return this.entries.has(item);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The items poisoned here, with what each report says. */
  *reports(): IterableIterator<[string, PoisonedItem]> {
    for (const [item, entry] of this.entries) yield [item, entry.report];
  }

  /** Reports `item`, whose lock failed for good with `error`. Nothing if reported already. */
  report(item: string, error: unknown): void {
    if (this.stopped || this.entries.has(item)) return;
    const entry: Entry = {
      report: poisonOf(this.id, error),
      state: 'writing',
      node: undefined,
      listed: false,
      dueAt: 0,
      delay: FIRST_RETRY_MS,
      trying: false,
    };
    this.entries.set(item, entry);
    this.write(item, entry);
    this.events.changed();
  }

  /**
   * The coordinator counts `poison` as ours (our assignment node lists them): an item of ours
   * counted, then no longer, had its report withdrawn (deleted by someone): it is tried again
   * (returns the items so cleared).
   */
  listedAs(poison: ReadonlySet<string>): string[] {
    const cleared: string[] = [];
    for (const [item, entry] of this.entries) {
      if (poison.has(item)) entry.listed = true;
      else if (entry.listed) cleared.push(item);
    }
    for (const item of cleared) this.withdraw(item);
    return cleared;
  }

  /** Forgets that `item` was poison here, and removes our report: it may be tried again. */
  withdraw(item: string): void {
    const entry = this.entries.get(item);
    if (!entry) return;
    this.entries.delete(item);
    if (entry.node) removeReport(this.client, entry.node.path, entry.node.sessionId);
    this.events.resolved(item);
    this.events.changed();
  }

  /** Removes every report of ours and stops trying. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const entry of this.entries.values()) {
      if (entry.node) removeReport(this.client, entry.node.path, entry.node.sessionId);
    }
    this.entries.clear();
  }

  private write(item: string, entry: Entry): void {
    const client = this.client;
    const node = joinPath(poisonPath(this.path), item);
    entry.state = 'writing';
    const work = client.promises
      .create(node, encodePoisonReport(entry.report), { mode: 'ephemeral', parents: 'container' })
      .then(
        (created) => {
          const sessionId = created.stat.ephemeralOwner;
          if (this.stopped || this.entries.get(item) !== entry) {
            removeReport(client, node, sessionId);
            return;
          }
          entry.node = { path: node, sessionId };
          this.written(item, entry);
        },
        async (error: unknown) => {
          if (this.stopped || this.entries.get(item) !== entry) return;
          if (isZkError(error, ZkErrorCode.NodeExists)) {
            // Reported already: by another member, or by us (a create whose reply was lost).
            const stat = await client.promises.exists(node).catch(() => null);
            if (this.entries.get(item) !== entry) return;
            if (stat && stat.ephemeralOwner === client.sessionId) {
              entry.node = { path: node, sessionId: stat.ephemeralOwner };
            }
            if (stat) return this.written(item, entry);
          }
          entry.state = 'unwritten';
          this.schedule(entry);
          this.events.problem(
            new PartitionProblemError(this.path, 'report-poison', item, { cause: error }),
          );
        },
      );
    client.track(work);
  }

  private written(item: string, entry: Entry): void {
    entry.state = 'written';
    entry.delay = FIRST_RETRY_MS;
    this.schedule(entry);
    this.events.resolved(item);
    this.events.changed();
  }

  /** Due again after its delay (doubled for the next time). */
  private schedule(entry: Entry): void {
    entry.dueAt = Date.now() + entry.delay;
    entry.delay = Math.min(LAST_RETRY_MS, entry.delay * 2);
    if (entry.dueAt >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = entry.dueAt;
    this.timer = setTimeout(() => this.due(), Math.max(0, entry.dueAt - Date.now()));
    this.timer.unref?.();
  }

  private due(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    const now = Date.now();
    for (const [item, entry] of this.entries) {
      if (entry.trying || entry.state === 'writing') continue;
      if (entry.dueAt > now) {
        if (entry.dueAt < this.timerAt) {
          this.timerAt = entry.dueAt;
          clearTimeout(this.timer);
          this.timer = setTimeout(() => this.due(), entry.dueAt - now);
          this.timer.unref?.();
        }
        continue;
      }
      if (entry.state === 'unwritten') this.write(item, entry);
      else this.tryAgain(item, entry);
    }
  }

  /**
   * Tries the item's lock once, never waiting: taken (and released at once) or held by someone
   * else, the lock works again — the report is withdrawn. Not an ownership: the item is never
   * in this member's assignment by this.
   */
  private tryAgain(item: string, entry: Entry): void {
    entry.trying = true;
    const work = tryAcquire(this.client, itemPath(this.path, item), {
      data: this.id,
      reentrant: false,
    }).then(
      async (lease) => {
        entry.trying = false;
        await lease?.release();
        if (this.entries.get(item) === entry) this.withdraw(item);
      },
      () => {
        entry.trying = false;
        if (this.entries.get(item) === entry && !this.stopped) this.schedule(entry);
      },
    );
    this.client.track(work.catch(ignore));
  }
}

/** Deletes our poison report (while its session is the client's), tracked by the client. */
function removeReport(client: ZkClient, node: string, sessionId: string): void {
  if (client.isClosed || client.sessionId !== sessionId) return;
  const work = (async () => {
    const stat = await client.promises.exists(node);
    if (stat && stat.ephemeralOwner === sessionId) {
      await client.promises.delete(node, stat.version);
    }
  })().catch(ignore);
  client.track(work);
}

/**
 * The poison reports as the coordinator reads them: a children watch on `<path>/poison` (kept:
 * one that fails — NoAuth, a listing over the client's `maxFrameBytes` — is a problem, set again
 * later) and one read of each new report.
 */
export class PoisonWatch {
  /** The reports read, by item. */
  readonly reports = new Map<string, PoisonedItem>();
  /** Reports listed and not read yet; undefined before the first listing. */
  private unread: Set<string> | undefined;
  private watch: Subscription | undefined;
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly events: {
      /** The reports changed (or became known). */
      changed(): void;
      problem(error: PartitionProblemError): void;
      /** The watch works (again). */
      resolved(): void;
    },
  ) {}

  /** Every listed report was read, or the listing cannot be had (then: the reports read so far). */
  get known(): boolean {
    return this.unread !== undefined && this.unread.size === 0;
  }

  start(): void {
    const where = poisonPath(this.path);
    this.watch = keepWatching(() => this.client.watchChildren(where), {
      next: (names) => {
        this.events.resolved();
        this.onListing(where, names);
      },
      failed: (error) => {
        this.unread = new Set();
        this.events.problem(
          new PartitionProblemError(this.path, 'watch-poison', undefined, { cause: error }),
        );
        this.events.changed();
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.watch?.unsubscribe();
  }

  private onListing(where: string, names: readonly string[]): void {
    const listed = new Set(names);
    let changed = false;
    for (const item of this.reports.keys()) {
      if (listed.has(item)) continue;
      this.reports.delete(item);
      changed = true;
    }
    const unread = new Set<string>();
    this.unread = unread;
    for (const item of names) {
      if (this.reports.has(item)) continue;
      unread.add(item);
      const done = () => {
        unread.delete(item);
        if (unread.size === 0) this.events.changed();
      };
      this.client.promises.get(joinPath(where, item)).then((node) => {
        const report = decodePoisonReport(node.data);
        if (report && !this.stopped) this.reports.set(item, report);
        done();
      }, done);
    }
    if (changed || unread.size === 0) this.events.changed();
  }
}
