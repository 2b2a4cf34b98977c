/**
 * A copy of one lock path's nodes — the path, its children, and the children of a semaphore's
 * `leases` and `locks` — kept up to date from the path's persistent recursive watch: each event
 * reads what it names (the node created or changed; the parent of a node created or deleted, for
 * its pzxid), so a change costs one or two gets (one multiRead) whatever the length of the queue.
 * `inspect` reads the copy (it answers as a client does: `InspectReads`), so each recipe's rules
 * stay in @zkrx/lock.
 *
 * ## Why the copy is what a read made now would show (once no read is in flight)
 *
 * It relies on these guarantees:
 * - **A persistent recursive watch notifies every create, delete and data change under its
 *   path, in the order they were applied, and drops none while the session's connection
 *   lasts** (ZooKeeper 3.6+). A gap — a reconnection, a new session — is told by the watch's
 *   `resync`, after which the copy is read whole again.
 * - **A session's replies and notifications come in the order the server made them**: a read
 *   sent after a change's notification reads the node as of that change or later, and a read
 *   whose reply shows a node alive was answered before its delete was notified.
 * - **@zkrx/core hands a reply to its caller before any notification read after it** (its
 *   promises resolve in the reply's turn: `client-promises.ts`), so a reply is taken before a
 *   later event of its node, even when both come in one chunk of the socket.
 *
 * So each node's last event is followed by a read sent after it, taken unless something newer
 * came: every event and every load replaces the node's ticket, and only the read holding the
 * current ticket is taken — a read that an event or a reload overtook (a read sent before a
 * reconnection and answered after it, a reply taken late) is dropped, never applied over newer
 * state. A delete drops the node at once. Once every read is answered, each node is as its last
 * event left it: the copy is the tree as the server has it after the last change notified.
 * `lock-mirror.integration.test.ts` attacks this: queues churned by many sessions through a cut
 * connection, and a read's reply handed over with its node's delete in one chunk — then the
 * copy's `inspect` against a fresh one.
 */
import {
  isZkError,
  joinPath,
  type NodeData,
  nameOf,
  parentOf,
  type Stat,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';

/** The children of a lock path that are folders of its nodes (a semaphore's). */
const FOLDERS = new Set(['leases', 'locks']);

/** As a client rejects a read of a node that is not there. */
function noNode(path: string): ZkError {
  return new ZkError(ZkErrorCode.NoNode, `${path} does not exist`, { path });
}

export class LockMirror {
  private readonly nodes = new Map<string, NodeData>();
  /** The children known of the folders copied: the root, its `leases` and `locks`. */
  private readonly kids = new Map<string, Set<string>>();
  /** Per node, the ticket of the read that may still be taken (replaced by each event). */
  private readonly tickets = new Map<string, number>();
  private ticket = 0;
  /** Loads so far: a listing of an earlier load is dropped. */
  private loads = 0;
  private inFlight = 0;
  private loaded = false;
  /** Every read of the last `load` was answered: the copy is whole (changes may be in flight). */
  private whole = false;
  private closed = false;
  /** The last read that failed (not a missing node): the copy is read whole at the next resync. */
  problem: string | undefined;

  constructor(
    private readonly client: ZkClient,
    readonly root: string,
    /** Called when no read is in flight any more (the copy is whole again). */
    private readonly onSettled: (mirror: LockMirror) => void,
  ) {}

  /** Reads in flight: the copy is about to change. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  /**
   * The copy was read whole since the last `load`: it answers `inspect` (a node whose event's
   * read is still in flight shows as it was before the event).
   */
  get ready(): boolean {
    return this.whole;
  }

  /** Nodes copied now. */
  get size(): number {
    return this.nodes.size;
  }

  /** Whether `path` is one of the nodes this copy keeps. */
  covers(path: string): boolean {
    if (path === this.root) return true;
    const parent = parentOf(path);
    return parent === this.root || this.isFolder(parent);
  }

  /**
   * Forgets the copy and reads it whole: the root, its children, a semaphore's `leases` and
   * `locks` and theirs. Called once the watch is in place (its `resync`), so no change after the
   * reads is missed.
   */
  load(): void {
    this.nodes.clear();
    this.kids.clear();
    this.tickets.clear();
    this.problem = undefined;
    this.loaded = true;
    this.whole = false;
    this.loads += 1;
    this.read(this.root);
    this.list(this.root, true);
  }

  /** A change under the root, as the watch tells it. */
  onEvent(type: 'created' | 'deleted' | 'changed', path: string): void {
    if (this.closed || !this.loaded || !this.covers(path)) return;
    if (type === 'deleted') {
      this.tickets.delete(path);
      this.remove(path);
    } else this.read(path);
    // The parent's Stat (its pzxid: the zxid of the last child created or deleted).
    if (type !== 'changed' && path !== this.root && this.covers(parentOf(path))) {
      this.read(parentOf(path));
    }
    this.settle();
  }

  close(): void {
    this.closed = true;
  }

  /** The reads `inspect` makes, answered from the copy (`InspectReads['promises']`). */
  childrenWithStat(path: string): Promise<{ children: string[]; stat: Stat }> {
    const node = this.nodes.get(path);
    if (!node) return Promise.reject(noNode(path));
    const children = [...(this.kids.get(path) ?? [])].sort();
    return Promise.resolve({ children, stat: node.stat });
  }

  get(path: string): Promise<NodeData> {
    const node = this.nodes.get(path);
    return node ? Promise.resolve(node) : Promise.reject(noNode(path));
  }

  private isFolder(path: string): boolean {
    return parentOf(path) === this.root && FOLDERS.has(nameOf(path));
  }

  private read(path: string): void {
    const ticket = ++this.ticket;
    this.tickets.set(path, ticket);
    this.inFlight += 1;
    this.client.promises.get(path).then(
      (node) => this.take(path, ticket, node),
      (error: unknown) => {
        if (isZkError(error, ZkErrorCode.NoNode)) this.take(path, ticket, undefined);
        else this.fail(path, ticket, error);
      },
    );
  }

  /** Lists a folder (at a load) and reads each child; a semaphore's folders are listed too. */
  private list(path: string, descend: boolean): void {
    const load = this.loads;
    this.inFlight += 1;
    this.client.promises.children(path).then(
      (names) => {
        this.inFlight -= 1;
        if (this.closed) return;
        if (load !== this.loads) return this.settle();
        for (const name of names) {
          const child = joinPath(path, name);
          // A read sent after the listing's reply: the node as it is now, or gone.
          this.read(child);
          if (descend && FOLDERS.has(name)) this.list(child, false);
        }
        this.settle();
      },
      (error: unknown) => {
        this.inFlight -= 1;
        if (load === this.loads && !isZkError(error, ZkErrorCode.NoNode)) {
          this.problem = `could not list ${path}: ${(error as Error).message}`;
        }
        this.settle();
      },
    );
  }

  private take(path: string, ticket: number, node: NodeData | undefined): void {
    this.inFlight -= 1;
    if (this.closed) return;
    if (this.tickets.get(path) === ticket) {
      this.tickets.delete(path);
      if (node) this.set(path, node);
      else this.remove(path);
    }
    this.settle();
  }

  /** A read failed (a lost connection: the resync that follows reads the copy whole again). */
  private fail(path: string, ticket: number, error: unknown): void {
    this.inFlight -= 1;
    if (this.closed) return;
    if (this.tickets.get(path) === ticket) {
      this.tickets.delete(path);
      this.problem = `could not read ${path}: ${(error as Error).message}`;
    }
    this.settle();
  }

  private set(path: string, node: NodeData): void {
    this.nodes.set(path, node);
    if (path === this.root) return;
    const parent = parentOf(path);
    let names = this.kids.get(parent);
    if (!names) {
      names = new Set();
      this.kids.set(parent, names);
    }
    names.add(nameOf(path));
  }

  private remove(path: string): void {
    this.nodes.delete(path);
    this.kids.get(parentOf(path))?.delete(nameOf(path));
    const children = this.kids.get(path);
    if (!children) return;
    this.kids.delete(path);
    for (const name of children) {
      const child = joinPath(path, name);
      this.tickets.delete(child);
      this.remove(child);
    }
  }

  private settle(): void {
    if (this.inFlight !== 0 || this.closed) return;
    this.whole = true;
    this.onSettled(this);
  }
}
