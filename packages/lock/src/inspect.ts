/**
 * `inspect` and `inspectTree`: who holds and who waits on the locks, semaphores, read-write locks
 * and elections at a path or under a subtree — nodes written by zkrx, Curator and kazoo alike.
 */
import {
  joinPath,
  nameOf,
  parentOf,
  type Stat,
  validatePath,
  ZkClient,
  ZkError,
  ZkErrorCode,
  type ZkPromises,
} from '@zkrx/core';
import {
  hasSemaphoreChildren,
  type InspectedKind,
  type InspectedLayout,
  isKazooLeaseName,
  isQueueNode,
  isSemaphoreListing,
  KAZOO_SEMAPHORE_LOCK_SUFFIX,
  layoutOfAll,
  layoutOfName,
  modeOf,
  type NodeLayout,
  type ParticipantMode,
  participantsOf,
  pendingLease,
  queueKind,
  splitQueue,
} from './inspect-rules';
import {
  type LockChild,
  parseChild,
  REVOKE_MESSAGE,
  SEMAPHORE_CHILDREN,
  sortChildren,
} from './recipe/lock-children';
import { unlessGone } from './recipe/unless-gone';

/** One node queued on a lock: a holder or a waiter. */
export interface InspectedParticipant {
  /** The participant's node (its full path: what `requestRevoke` and `zkrx release` take). */
  readonly node: string;
  /** What it asked for: `exclusive`, `read`, `write`, `candidate` (election) or `lease`. */
  readonly mode: ParticipantMode;
  /** Whose names: `curator` (Curator's layout, which zkrx shares) or `kazoo`. */
  readonly layout: NodeLayout;
  /** The sequence ZooKeeper appended to the name (signed, as written), if any. */
  readonly sequence: number | undefined;
  /** The owning session (the node's ephemeralOwner, hex as ZooKeeper prints it). */
  readonly sessionId: string;
  /**
   * The node's data as UTF-8: zkrx writes `hostname:pid` (or the `data` / candidate `id`
   * option), Curator its client's default data — the local IP address — unless given a
   * participant id, kazoo the recipe's identifier (empty by default).
   */
  readonly data: string;
  /** The data is `__REVOKE__`: someone asked the holder to release (`requestRevoke`, Curator's `Revoker`). */
  readonly revokeRequested: boolean;
  /** When the node was created: ms since the epoch, by the server's clock (ctime). */
  readonly createdAt: number;
  /** `readAt - createdAt`: how long it has been queued (a holder: held at most this long). */
  readonly ageMs: number;
  /** The owning session is this client's current session. */
  readonly ownSession: boolean;
  /** The node's data version (a `requestRevoke` makes it 1). */
  readonly version: number;
  /** The zxid of the node's creation (what zkrx gives its holder as `fencingToken`). */
  readonly czxid: number;
}

/** A lock found at a path: its kind and layout, who holds it and who waits, in order. */
export interface InspectedLock {
  /** The lock's path (what a recipe was given). */
  readonly path: string;
  /** `mutex` (also the layout of selector-style elections), `read-write`, `semaphore`, `election`. */
  readonly kind: InspectedKind;
  /** `curator` (Curator's layout, which zkrx shares), `kazoo`, or `mixed`: both queue on it. */
  readonly layout: InspectedLayout;
  /**
   * Who holds it: a mutex's first node, a read-write lock's writer or every reader before the
   * first writer, a semaphore's leases, an election's leader.
   */
  readonly holders: readonly InspectedParticipant[];
  /** Who waits, in the order the recipe lets them in. */
  readonly waiters: readonly InspectedParticipant[];
  /** A kazoo semaphore's capacity (its path's data); Curator and zkrx do not record theirs. */
  readonly maxLeases: number | undefined;
  /**
   * The zxid of the last change among the holders' nodes: the pzxid of the lock path (of
   * `leases` for a Curator or zkrx semaphore).
   */
  readonly pzxid: number;
  /** When this was read: ms since the epoch, by this machine's clock. */
  readonly readAt: number;
}

/**
 * What `inspect` reads with: a client, or anything that answers its two reads the way a
 * client's `promises` do — `childrenWithStat` and `get`, rejecting with ZkError `NoNode` for a
 * node that is not there — such as a copy of a lock's nodes kept up to date from its watch
 * (what @zkrx/console keeps, so a change costs the reads of what changed, not of the queue).
 */
export interface InspectReads {
  /** The session whose nodes are flagged `ownSession` (undefined: none). */
  readonly sessionId: string | undefined;
  readonly promises: Pick<ZkPromises, 'childrenWithStat' | 'get'>;
}

interface Listing {
  readonly children: string[];
  readonly stat: Stat;
}

interface ReadNode {
  readonly child: LockChild;
  readonly node: string;
  readonly data: Buffer;
  readonly stat: Stat;
}

/** How many reads an `inspectTree` keeps in flight. */
const TREE_CONCURRENCY = 16;

function checkInput(client: unknown, path: unknown, what: string, reads = false): string {
  if (!ZkClient.isInstance(client) && !(reads && isInspectReads(client))) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: expected a ZkClient from @zkrx/core's createClient${reads ? ' (or its reads: sessionId, promises.childrenWithStat and promises.get)' : ''}`,
    );
  }
  if (typeof path !== 'string') {
    throw new ZkError(
      ZkErrorCode.InvalidPath,
      `${what}: path must be a string, got ${typeof path}`,
    );
  }
  return validatePath(path);
}

function isInspectReads(value: unknown): value is InspectReads {
  const promises = (value as { promises?: Partial<InspectReads['promises']> } | null)?.promises;
  return typeof promises?.childrenWithStat === 'function' && typeof promises.get === 'function';
}

function listing(client: InspectReads, path: string): Promise<Listing | undefined> {
  return unlessGone(client.promises.childrenWithStat(path));
}

/** Reads each child's data and Stat, in the order given; drops those already gone. */
async function readNodes(
  client: InspectReads,
  parent: string,
  children: readonly LockChild[],
): Promise<ReadNode[]> {
  const read = await Promise.all(
    children.map(async (child): Promise<ReadNode | undefined> => {
      const node = joinPath(parent, child.name);
      const found = await unlessGone(client.promises.get(node));
      return found && { child, node, data: found.data, stat: found.stat };
    }),
  );
  return read.filter((entry): entry is ReadNode => entry !== undefined);
}

class Reader {
  readonly readAt = Date.now();
  constructor(private readonly client: InspectReads) {}

  participant(read: ReadNode, kind: InspectedKind): InspectedParticipant {
    const data = read.data.toString('utf8');
    const sequence = Number.isFinite(read.child.order) ? Number(read.child.key) : undefined;
    return {
      node: read.node,
      mode: modeOf(read.child, kind),
      layout: layoutOfName(read.child.name),
      sequence,
      sessionId: read.stat.ephemeralOwner,
      data,
      revokeRequested: data === REVOKE_MESSAGE,
      createdAt: read.stat.ctime,
      ageMs: Math.max(0, this.readAt - read.stat.ctime),
      ownSession: read.stat.ephemeralOwner === this.client.sessionId,
      version: read.stat.version,
      czxid: read.stat.czxid,
    };
  }

  lock(
    path: string,
    kind: InspectedKind,
    holders: readonly ReadNode[],
    waiters: readonly ReadNode[],
    pzxid: number,
    maxLeases?: number,
  ): InspectedLock {
    const all = [...holders, ...waiters];
    return {
      path,
      kind,
      layout: layoutOfAll(all.map((read) => layoutOfName(read.child.name))),
      holders: holders.map((read) => this.participant(read, kind)),
      waiters: waiters.map((read) => this.participant(read, kind)),
      maxLeases,
      pzxid,
      readAt: this.readAt,
    };
  }

  /** A queue lock (mutex, read-write lock, election) from its path's listing. */
  async queue(path: string, list: Listing): Promise<InspectedLock | undefined> {
    const children = sortChildren(list.children);
    const kind = queueKind(children);
    if (kind === undefined) return undefined;
    const read = await readNodes(this.client, path, participantsOf(kind, children));
    const { holders, waiters } = splitQueue(kind, read);
    return this.lock(path, kind, holders, waiters, list.stat.pzxid);
  }

  /** A Curator (or zkrx) semaphore: leases under `<path>/leases`, takers under `<path>/locks`. */
  async curatorSemaphore(path: string): Promise<InspectedLock | undefined> {
    const leasesPath = joinPath(path, 'leases');
    const locksPath = joinPath(path, 'locks');
    const [leases, locks] = await Promise.all([
      listing(this.client, leasesPath),
      listing(this.client, locksPath),
    ]);
    if (!isSemaphoreListing(leases?.children, locks?.children)) return undefined;
    const [leaseNodes, lockNodes] = await Promise.all([
      readNodes(this.client, leasesPath, sortChildren(leases?.children ?? [])),
      readNodes(this.client, locksPath, sortChildren(locks?.children ?? []).filter(isQueueNode)),
    ]);
    const stamp = (read: ReadNode) => ({
      sessionId: read.stat.ephemeralOwner,
      czxid: read.stat.czxid,
      read,
    });
    const head = lockNodes[0];
    const pending = pendingLease(leaseNodes.map(stamp), head && stamp(head))?.read;
    const holders = leaseNodes.filter((read) => read !== pending);
    const waiters = pending
      ? [lockNodes[0] as ReadNode, pending, ...lockNodes.slice(1)]
      : lockNodes;
    return this.lock(
      path,
      'semaphore',
      holders,
      waiters,
      leases?.stat.pzxid ?? locks?.stat.pzxid ?? 0,
    );
  }

  /**
   * A kazoo Semaphore: EPHEMERAL lease nodes named `uuid4().hex` under `<path>`, whose data is
   * the capacity, and takers queued on the kazoo Lock `<path>-__lock__`.
   */
  async kazooSemaphore(path: string, list: Listing): Promise<InspectedLock | undefined> {
    if (!list.children.every(isKazooLeaseName)) return undefined;
    const text = (await unlessGone(this.client.promises.get(path)))?.data.toString('utf8');
    if (text === undefined || !/^\d+$/.test(text)) return undefined;
    const capacity = Number(text);
    const lockPath = `${path === '/' ? '' : path}${KAZOO_SEMAPHORE_LOCK_SUFFIX}`;
    const [leases, takers] = await Promise.all([
      readNodes(this.client, path, list.children.map(parseChild)),
      listing(this.client, lockPath),
    ]);
    if (leases.some((read) => read.stat.ephemeralOwner === '0')) return undefined;
    leases.sort((a, b) => a.stat.czxid - b.stat.czxid);
    const waiters = await readNodes(
      this.client,
      lockPath,
      sortChildren(takers?.children ?? []).filter(isQueueNode),
    );
    if (leases.length === 0 && waiters.length === 0) return undefined;
    return this.lock(path, 'semaphore', leases, waiters, list.stat.pzxid, capacity);
  }

  /** The lock at `path` given its listing, and the children worth descending into. */
  async examine(
    path: string,
    list: Listing,
  ): Promise<{ lock: InspectedLock | undefined; descend: string[] }> {
    if (hasSemaphoreChildren(list.children)) {
      const semaphore = await this.curatorSemaphore(path);
      if (semaphore) return { lock: semaphore, descend: [] };
      return { lock: undefined, descend: list.children };
    }
    const others = list.children.filter((name) => !isQueueNode(parseChild(name)));
    const queue = await this.queue(path, list);
    if (queue) return { lock: queue, descend: others };
    if (list.children.length > 0 && list.children.every(isKazooLeaseName)) {
      const semaphore = await this.kazooSemaphore(path, list);
      if (semaphore) return { lock: semaphore, descend: [] };
    }
    return { lock: undefined, descend: others };
  }

  /** A kazoo semaphore's lock path `<base>-__lock__` → the semaphore at `<base>`, if it is one. */
  async kazooSemaphoreOfLock(lockPath: string): Promise<InspectedLock | undefined> {
    const base = lockPath.slice(0, -KAZOO_SEMAPHORE_LOCK_SUFFIX.length);
    if (!base.startsWith('/') || base.endsWith('/')) return undefined;
    const list = await listing(this.client, base);
    return list && this.kazooSemaphore(base, list);
  }
}

/**
 * Who holds and who waits on the lock at `path`: a mutex, read-write lock, semaphore or
 * election, written by zkrx, Curator or kazoo. Reads the path's children, then each node's
 * data and Stat (one round trip, pipelined); resolves null when nothing lock-like is there
 * (no node, no queue).
 *
 * ## Example
 * ```ts
 * const lock = await inspect(client, '/locks/orders');
 * console.log(lock?.kind, lock?.holders.map((holder) => holder.data));
 * // Output: mutex [ 'web-1:4242' ]
 * ```
 *
 * @param client Any connected client (its own session's nodes are flagged `ownSession`), or
 *   reads of the same nodes answered as a client answers them (`InspectReads`).
 * @param path A lock path (a semaphore's `leases` or `locks`, or a kazoo semaphore's
 *   `<path>-__lock__`, reads as its semaphore).
 * @return The lock, or null. Rejects with ZkError `InvalidPath` or `BadArguments` for bad
 *   input, and with the client's errors (`ConnectTimeout`, `NoAuth`, ...).
 */
export async function inspect(
  client: ZkClient | InspectReads,
  path: string,
): Promise<InspectedLock | null> {
  const valid = checkInput(client, path, 'inspect', true);
  const reader = new Reader(client);
  const name = valid === '/' ? '' : nameOf(valid);
  if (SEMAPHORE_CHILDREN.includes(name)) {
    const parent = parentOf(valid);
    const list = await listing(client, parent);
    if (list && hasSemaphoreChildren(list.children)) {
      const semaphore = await reader.curatorSemaphore(parent);
      if (semaphore) return semaphore;
    }
  }
  if (name.endsWith(KAZOO_SEMAPHORE_LOCK_SUFFIX)) {
    const semaphore = await reader.kazooSemaphoreOfLock(valid);
    if (semaphore) return semaphore;
  }
  const list = await listing(client, valid);
  if (!list) return null;
  const { lock } = await reader.examine(valid, list);
  if (lock) return lock;
  // A kazoo semaphore with no lease held: its takers wait on `<path>-__lock__`.
  if (list.children.length === 0) return (await reader.kazooSemaphore(valid, list)) ?? null;
  return null;
}

/**
 * Every lock under `root` (and at it), sorted by path: `inspect` over the subtree. Walks the
 * tree with one children listing per znode (16 in flight), never descending into a lock's own
 * nodes; skips `/zookeeper`. A kazoo semaphore's `<path>-__lock__` is folded into its semaphore.
 *
 * ## Example
 * ```ts
 * for (const lock of await inspectTree(client, '/locks')) {
 *   console.log(lock.path, lock.kind, lock.holders.length, lock.waiters.length);
 * }
 * // Output: /locks/orders mutex 1 2
 * //         /locks/reports read-write 3 1
 * ```
 *
 * @param client Any connected client.
 * @param root Where to start (`/` for the whole tree).
 * @return The locks found (none when `root` does not exist).
 */
export async function inspectTree(client: ZkClient, root: string): Promise<InspectedLock[]> {
  const valid = checkInput(client, root, 'inspectTree');
  const reader = new Reader(client);
  const found = new Map<string, InspectedLock>();
  const pending = [valid];
  const walk = async (): Promise<void> => {
    for (let path = pending.shift(); path !== undefined; path = pending.shift()) {
      const list = await listing(client, path);
      if (!list) continue;
      const { lock, descend } = await reader.examine(path, list);
      if (lock) found.set(path, lock);
      for (const child of descend) {
        if (path === '/' && child === 'zookeeper') continue;
        pending.push(joinPath(path, child));
      }
    }
  };
  // Workers take paths as the walk finds them; one that finds the queue empty stops, so wait
  // until every worker stopped with nothing left.
  while (pending.length > 0) {
    await Promise.all(Array.from({ length: TREE_CONCURRENCY }, walk));
  }
  for (const [path, lock] of [...found]) {
    if (lock.kind !== 'mutex' || !path.endsWith(KAZOO_SEMAPHORE_LOCK_SUFFIX)) continue;
    const base = path.slice(0, -KAZOO_SEMAPHORE_LOCK_SUFFIX.length);
    if (found.get(base)?.kind === 'semaphore') {
      found.delete(path);
      continue;
    }
    const semaphore = await reader.kazooSemaphoreOfLock(path);
    if (semaphore) {
      found.delete(path);
      found.set(semaphore.path, semaphore);
    }
  }
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
