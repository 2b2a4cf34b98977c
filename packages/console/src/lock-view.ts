/**
 * The `locks` and `leaders` views of a path: the path's own lock (its whole queue, up to the
 * limit) and its children a page at a time, each a lock (holders and the first waiters) or a
 * folder to open. What is watched is what the page shows: the path's child watch, one watch a
 * row (`PathProbe`), none for what is off the page.
 */
import type { InspectedLock, InspectedParticipant } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import type { Hub } from './hub';
import { PathProbe } from './path-probe';
import { PAGE_SIZE, type PathViewSpec } from './view-spec';

/** Waiters shown on a row (the lock's own view shows them all). */
const ROW_WAITERS = 5;
/** How long a lost lease stays marked on its lock (as `zkrx locks --watch` marks it). */
const LOST_MARK_MS = 60_000;
const KAZOO_SEMAPHORE_LOCK = '-__lock__';
/** Recent changes listed beside the view. */
const RECENT = 20;

/** A holder or waiter, as a page shows it. */
export interface ParticipantView {
  readonly node: string;
  readonly mode: string;
  readonly layout: string;
  readonly sessionId: string;
  readonly data: string;
  readonly revokeRequested: boolean;
  readonly createdAt: number;
  /** When the console saw it start holding (exact); else it held at most since `createdAt`. */
  readonly heldSince: number | undefined;
  /** Its czxid: the fencing token zkrx gives its holder. */
  readonly token: number;
  readonly version: number;
}

/** A lock, as a page shows it. */
export interface LockView {
  readonly path: string;
  readonly kind: string;
  readonly layout: string;
  readonly maxLeases: number | undefined;
  readonly holders: readonly ParticipantView[];
  readonly waiters: readonly ParticipantView[];
  /** Waiters in all (`waiters` may show fewer). */
  readonly waiting: number;
  /** A lease lost with its session in the last minute: when. */
  readonly lostAt: number | undefined;
}

/** One child of the path. */
export interface RowView {
  readonly name: string;
  readonly path: string;
  readonly mode: 'unknown' | 'lock' | 'folder';
  readonly children: number;
  readonly lock: LockView | undefined;
  readonly problem: string | undefined;
  /** No lock there now, and a lease of it was lost with its session in the last minute: when. */
  readonly lostAt: number | undefined;
}

/** The kinds each view shows (a mutex's layout is also an election's: both show it). */
export function shownIn(view: 'locks' | 'leaders', kind: string): boolean {
  return view === 'locks' ? kind !== 'election' : kind === 'election' || kind === 'mutex';
}

export class PathLocksView {
  private readonly probes = new Map<string, PathProbe>();
  private readonly root: PathProbe;
  private children: readonly string[] = [];
  private listed = false;
  private readonly listing: Subscription;
  private readonly stopBook: () => void;
  private readonly stopHistory: () => void;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(
    private readonly hub: Hub,
    private readonly spec: Extract<PathViewSpec, { view: 'locks' | 'leaders' }>,
    private readonly send: (message: object) => void,
  ) {
    this.root = new PathProbe(hub.client, hub.book, spec.path, () => {
      this.placeProbes();
      this.schedule();
    });
    this.listing = hub.client.watchChildren(spec.path).subscribe({
      next: (names) => {
        this.children = names;
        this.listed = true;
        this.placeProbes();
        this.schedule();
      },
      error: () => this.schedule(),
    });
    // A read of a lock this page shows: the path's own, or a row's.
    this.stopBook = hub.book.onChange((paths) => {
      for (const path of paths) {
        if (path === spec.path || this.probes.has(path)) return this.schedule();
      }
    });
    // Only a lock's entry under the path changes what the page shows (a fleet's move, or a
    // lock's elsewhere, would resend a 1,000-waiter queue for nothing).
    this.stopHistory = hub.history.onChange((added) => {
      if (added.some((entry) => entry.scope === 'lock' && isUnder(entry.path, spec.path)))
        this.schedule();
    });
  }

  close(): void {
    this.closed = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.listing.unsubscribe();
    this.stopBook();
    this.stopHistory();
    this.root.close();
    for (const probe of this.probes.values()) probe.close();
    this.probes.clear();
  }

  /** The children on this page, a kazoo semaphore's `<name>-__lock__` folded into `<name>`. */
  private pageNames(): { names: string[]; total: number } {
    const present = new Set(this.children);
    const shown =
      this.root.mode === 'lock'
        ? this.children.filter((name) => !isQueueName(name))
        : this.children;
    const names = shown.filter(
      (name) =>
        !(
          name.endsWith(KAZOO_SEMAPHORE_LOCK) &&
          present.has(name.slice(0, -KAZOO_SEMAPHORE_LOCK.length))
        ) && !(this.spec.path === '/' && name === 'zookeeper'),
    );
    const start = this.spec.page * PAGE_SIZE;
    return { names: names.slice(start, start + PAGE_SIZE), total: names.length };
  }

  private placeProbes(): void {
    // Not before the path itself is known to be a lock or not: a lock's queue nodes are not
    // rows (a child watch set on each, and removed again, would cost the server for nothing).
    if (this.root.mode === 'unknown') return;
    const wanted = new Set(this.pageNames().names.map((name) => joined(this.spec.path, name)));
    for (const [path, probe] of this.probes) {
      if (!wanted.has(path)) {
        probe.close();
        this.probes.delete(path);
      }
    }
    for (const path of wanted) {
      if (!this.probes.has(path)) {
        this.probes.set(
          path,
          new PathProbe(this.hub.client, this.hub.book, path, () => this.schedule()),
        );
      }
    }
  }

  private schedule(): void {
    if (this.closed) return;
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      if (!this.closed) this.send(this.message());
    });
  }

  private message(): object {
    const { spec } = this;
    const rootLock = this.root.mode === 'lock' ? this.lockView(spec.path, spec.limit) : undefined;
    // The queue nodes of the path's own lock are its lock, not rows.
    if (this.root.mode === 'lock') this.placeProbes();
    const { names, total } = this.pageNames();
    const rows: RowView[] = [];
    for (const name of names) {
      const path = joined(spec.path, name);
      const probe = this.probes.get(path);
      const lock = probe?.mode === 'lock' ? this.lockView(path, ROW_WAITERS) : undefined;
      if (lock && !shownIn(spec.view, lock.kind)) continue;
      rows.push({
        name,
        path,
        mode: probe?.mode ?? 'unknown',
        children: probe?.childCount ?? 0,
        lock,
        problem: probe?.problem ?? this.hub.book.problem(path),
        lostAt: lock ? undefined : this.lostAt(path),
      });
    }
    return {
      type: 'locks',
      view: spec.view,
      path: spec.path,
      page: spec.page,
      pageSize: PAGE_SIZE,
      total,
      listed: this.listed,
      root: rootLock && shownIn(spec.view, rootLock.kind) ? rootLock : undefined,
      rootMode: this.root.mode,
      rows,
      terms:
        rootLock?.kind === 'election' || (spec.view === 'leaders' && rootLock)
          ? this.terms(spec.path)
          : undefined,
      recent: this.hub.history
        .list()
        .filter((entry) => entry.scope === 'lock' && isUnder(entry.path, spec.path))
        .slice(-RECENT),
      watched: this.hub.counts(),
      problem: this.root.problem ?? this.hub.book.problem(spec.path),
    };
  }

  private lockView(path: string, limit: number): LockView | undefined {
    const lock = this.hub.book.read(path)?.lock;
    if (!lock) return undefined;
    return lockViewOf(lock, limit, (node) => this.hub.book.heldSince(node), this.lostAt(path));
  }

  private lostAt(path: string): number | undefined {
    const now = Date.now();
    let at: number | undefined;
    for (const entry of this.hub.history.list()) {
      if (
        entry.scope === 'lock' &&
        entry.path === path &&
        entry.lost &&
        now - entry.at < LOST_MARK_MS
      )
        at = entry.at;
    }
    return at;
  }

  /** An election's terms seen while the console was open: who led, from when, how it ended. */
  private terms(path: string): object[] {
    const terms: {
      leader: string;
      data: string;
      from: number;
      to?: number;
      ended?: string;
      atMost?: boolean;
    }[] = [];
    for (const entry of this.hub.history.list()) {
      if (entry.scope !== 'lock' || entry.path !== path) continue;
      const open = terms.at(-1);
      const ended = entry.lost
        ? 'lost (session ended)'
        : entry.kind === 'handed-over'
          ? 'handed over'
          : 'left';
      if (entry.from !== undefined && open && open.to === undefined) {
        open.to = entry.at;
        open.ended = ended;
      } else if (entry.from !== undefined) {
        // A term that began before the console saw it: from its node's age (at most).
        terms.push({
          leader: entry.from,
          data: entry.fromData ?? '',
          from: entry.at - (entry.heldMs ?? 0),
          to: entry.at,
          ended,
          atMost: !entry.exact,
        });
      }
      if (entry.to !== undefined)
        terms.push({ leader: entry.to, data: entry.toData ?? '', from: entry.at });
    }
    return terms;
  }
}

/** A lock as a page shows it, `limit` waiters at most. */
export function lockViewOf(
  lock: InspectedLock,
  limit: number,
  heldSince: (node: string) => number | undefined,
  lostAt: number | undefined,
): LockView {
  const participant = (each: InspectedParticipant, holds: boolean): ParticipantView => ({
    node: each.node,
    mode: each.mode,
    layout: each.layout,
    sessionId: each.sessionId,
    data: each.data,
    revokeRequested: each.revokeRequested,
    createdAt: each.createdAt,
    heldSince: holds ? heldSince(each.node) : undefined,
    token: each.czxid,
    version: each.version,
  });
  return {
    path: lock.path,
    kind: lock.kind,
    layout: lock.layout,
    maxLeases: lock.maxLeases,
    holders: lock.holders.map((each) => participant(each, true)),
    waiters: lock.waiters.slice(0, limit).map((each) => participant(each, false)),
    waiting: lock.waiters.length,
    lostAt,
  };
}

function isUnder(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

function joined(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

/** A lock's own queue node (it has a sequence), or a semaphore's `leases` / `locks`. */
function isQueueName(name: string): boolean {
  return (
    /\d{10}$/.test(name) || name === 'leases' || name === 'locks' || /^[0-9a-f]{32}$/.test(name)
  );
}
