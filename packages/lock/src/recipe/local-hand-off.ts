/**
 * The hand-off between queue nodes of one client: a waiter whose predecessor is a node of its own
 * client waits for this client's removal of that node instead of a ZooKeeper watch, and a node
 * that held first is removed with `multi(check(successor), delete(node))` (sent by
 * `removeOwnNode` in `clean-up.ts`, the one place a node of ours is removed), which tells the
 * successor it is first — no watch, no notification, no listing. A node that ZooKeeper numbered
 * right after such a node needs no listing either to know its predecessor.
 *
 * Why the successor may hold on that transaction's success, without a listing (its safety
 * argument; `exclusiveRule` and `afterHandOff` in `queue-rules.ts` decide the rest). Say our
 * waiter's node `w` and its predecessor `p`, of this client's session. The waiter knows that no
 * node sorts between them in one of two ways:
 * - `w`'s listing L showed `p` immediately before `w`. No node can come between them later: a
 *   node created after `w` in the parent `w` lives in gets a higher sequence, and that parent
 *   cannot be reaped while `w` is in it; or
 * - without a listing, ZooKeeper numbered `w` one after `p` (`ClientNodes.rightBefore`): if both
 *   live in one parent znode, nothing was created there between them, so nothing sorts between
 *   them, ever. That they do is proven by the transaction below: at its zxid both existed under
 *   the one path, hence in the one parent znode that path named then.
 * (A writer's downgrade read node, not sequential, stands where its writer stood:
 * `withoutAwaited` puts a reader in `p`'s place.) Then:
 * - `p` held first: at some zxid a listing containing `p` showed no node before it (or such a
 *   hand-off made it first, recursively). Nothing sorts before it from then on while it exists,
 *   by the same argument.
 * - The transaction checks `w` and deletes `p` at one zxid Z, or does nothing. Applied, at Z `w`
 *   existed (the check: a name holding a UUID made for one create, so a path reaped and made again
 *   cannot have it), `p` was deleted, and nothing was before `p`: `w` was first at Z, and stays
 *   first while it exists. Nothing this client believed plays a part: the server checked both
 *   nodes at one zxid.
 * Anything else — `p` removed while it only waited (it gave up), removed by a plain delete
 * (nobody waited on it yet, or it did not hold first), found gone (an operator deleted it, its
 * session ended), the transaction failed (our node was deleted: its check fails, nothing is
 * applied), a connection lost with it in flight — tells the successor only that `p` is gone, and
 * the successor lists, as after any ZooKeeper notification.
 *
 * A lock path shared by a semaphore and a queue lock fails fast when one of them lists (a queue
 * lock seeing `locks`/`leases`, a semaphore seeing a queue node). Nodes decided without a listing
 * follow a chain of this client's nodes, each alive until the next one holds, from one that
 * listed: a semaphore that listed while the chain ran saw one of its nodes.
 *
 * A node only waited on locally must still not hold the queue up for ever when someone else
 * deletes it: a held node with a local successor is watched by its lease once the hold outlives
 * `Hold`'s arming delay, so that its deletion ends the hold and, with it, the successor's
 * wait; a node still waiting is removed by its own queue once its wait ends, as any waiter's.
 */
import type { ZkClient } from '@zkrx/core';
import { type LockChild, parseChild } from './lock-children';
import { sessionOf } from './session';

/** How the local wait on a predecessor ended. */
export type LocalWaitEnd =
  /** `multi(check(ours), delete(it))` was applied: we are first (see the module header). */
  | 'handed'
  /** It is gone, nothing more known: list again. */
  | 'removed';

/** A local waiter on a node: its own node, and how it is told that the wait ended. */
export interface Successor {
  readonly node: string;
  readonly tell: (end: LocalWaitEnd) => void;
}

/** A queue node of this client, as its local successor sees it. */
export class LocalNode {
  /**
   * It held with nothing before it (see the module header): its removal may hand over. Set only
   * for a sequential node whose hold was decided with it at index 0.
   */
  first = false;
  /** Removed (or its session ended): kept a moment, so that a waiter that listed it learns it. */
  private gone = false;
  /** Its removal has begun (`startRemoval`): no new node of ours will follow it in the queue. */
  removing = false;
  private successor: Successor | undefined;
  private onWaiter: (() => void) | undefined;

  /** The node's name, parsed (its kind and creation order). */
  readonly child: LockChild;
  /** The lock path it stands in. */
  readonly lockPath: string;

  constructor(
    readonly path: string,
    readonly sessionId: string,
    private readonly forget: (node: LocalNode) => void,
  ) {
    const slash = path.lastIndexOf('/');
    this.lockPath = slash === 0 ? '/' : path.slice(0, slash);
    this.child = parseChild(path.slice(slash + 1));
  }

  /** Whether a waiter of session `sessionId` may wait on this node locally (one waiter at most). */
  canWait(sessionId: string): boolean {
    return this.successor === undefined && sessionId === this.sessionId;
  }

  /**
   * Waits on this node's removal by this client for the waiter whose node is `node`: `tell` is
   * called once, with how it ended (`removed` on the next microtask when it is gone already).
   * Unsubscribing (the wait ended otherwise) lets it go.
   */
  await(node: string, tell: (end: LocalWaitEnd) => void): { unsubscribe(): void } {
    if (this.gone) {
      let waiting = true;
      queueMicrotask(() => {
        if (waiting) tell('removed');
      });
      return {
        unsubscribe: () => {
          waiting = false;
        },
      };
    }
    const successor: Successor = { node, tell };
    this.successor = successor;
    this.onWaiter?.();
    return {
      unsubscribe: () => {
        if (this.successor === successor) this.successor = undefined;
      },
    };
  }

  /** Calls `listener` when a local waiter waits on this node (at once if one does). */
  whenWaitedOn(listener: (() => void) | undefined): void {
    this.onWaiter = listener;
    if (listener && this.successor) listener();
  }

  /**
   * Its removal begins (`removeOwnNode`, in `clean-up.ts`): no new node of ours will follow it
   * in the queue. Returns the local waiter to hand the lock over to — when this node held first
   * and one waits on it — whose node the removal's `multi(check(waiter), delete(node))` checks;
   * undefined when there is nothing to hand over (the node is deleted as usual). Either way the
   * removal ends with `handedTo(waiter)` (the transaction was applied) or `removed()`.
   */
  startRemoval(): Successor | undefined {
    this.removing = true;
    const successor = this.successor;
    if (!this.first || !successor || this.gone) return undefined;
    return successor;
  }

  /**
   * `multi(check(waiter), delete(node))` was applied: the waiter holds. Only the waiter whose node
   * was checked: one that came since (none can, a node right after ours being that one) lists.
   */
  handedTo(waiter: Successor): void {
    this.end(this.successor === waiter ? 'handed' : 'removed');
  }

  /** The node is gone, or no longer ours to remove: its successor, if any, lists again. */
  removed(): void {
    this.end('removed');
  }

  private end(end: LocalWaitEnd): void {
    if (this.gone) return;
    this.gone = true;
    const successor = this.successor;
    this.successor = undefined;
    this.onWaiter = undefined;
    this.forget(this);
    successor?.tell(end);
  }
}

/** The queue nodes of one client that are alive (or gone a moment ago), by path. */
class ClientNodes {
  private readonly nodes = new Map<string, LocalNode>();
  /** The live ones, by lock path and creation order. */
  private readonly live = new Map<string, Map<number, LocalNode>>();
  /** Gone nodes, forgotten at the next turn of the event loop (one sweep for them all). */
  private gone: LocalNode[] = [];
  /** The sessions whose end is watched (their nodes are forgotten with them). */
  private readonly sessions = new Set<string>();

  constructor(private readonly client: ZkClient) {}

  /**
   * A node of ours, made by `sessionId`'s create. `sequential`: ZooKeeper numbered it (a
   * downgrade read node, named with its writer's number, is not indexed by creation order).
   */
  add(path: string, sessionId: string, sequential: boolean): LocalNode {
    const node = new LocalNode(path, sessionId, (gone) => this.forgetSoon(gone));
    this.nodes.set(path, node);
    this.watchSession(sessionId);
    if (!sequential || !Number.isFinite(node.child.order)) return node;
    let byOrder = this.live.get(node.lockPath);
    if (!byOrder) {
      byOrder = new Map();
      this.live.set(node.lockPath, byOrder);
    }
    byOrder.set(node.child.order, node);
    return node;
  }

  get(path: string): LocalNode | undefined {
    return this.nodes.get(path);
  }

  /** The live node of session `sessionId` created last under `lockPath`, not being removed. */
  latest(lockPath: string, sessionId: string): LocalNode | undefined {
    let found: LocalNode | undefined;
    for (const node of this.live.get(lockPath)?.values() ?? []) {
      if (node.removing || node.sessionId !== sessionId) continue;
      if (!found || node.child.order > found.child.order) {
        found = node;
      }
    }
    return found;
  }

  /**
   * The live node of the same session numbered right before `node` under its lock path (its
   * sequence one less), if any: created right before it, if both are in one parent znode.
   */
  rightBefore(node: LocalNode): LocalNode | undefined {
    const before = this.live.get(node.lockPath)?.get(node.child.order - 1);
    return before?.sessionId === node.sessionId ? before : undefined;
  }

  /**
   * A gone node stays known until the next turn of the event loop: a waiter of ours whose listing
   * was read before this client removed it, but reaches its decision after the removal's reply
   * (both replies read in one go), learns it is gone without asking the server.
   */
  private forgetSoon(node: LocalNode): void {
    const byOrder = this.live.get(node.lockPath);
    if (byOrder?.get(node.child.order) === node) {
      byOrder.delete(node.child.order);
      if (byOrder.size === 0) this.live.delete(node.lockPath);
    }
    if (this.gone.push(node) > 1) return;
    setImmediate(() => {
      const gone = this.gone;
      this.gone = [];
      for (const each of gone) {
        if (this.nodes.get(each.path) === each) this.nodes.delete(each.path);
      }
    });
  }

  /** A session's end takes its ephemeral nodes: forget them, and let their waiters list. */
  private watchSession(sessionId: string): void {
    if (this.sessions.has(sessionId)) return;
    const session = sessionOf(this.client, { id: sessionId, onSuspended: 'wait' });
    if (!session) return;
    this.sessions.add(sessionId);
    session.status$.subscribe({
      complete: () => {
        this.sessions.delete(sessionId);
        for (const node of [...this.nodes.values()]) {
          if (node.sessionId === sessionId) node.removed();
        }
      },
    });
  }
}

const clients = new WeakMap<ZkClient, ClientNodes>();

/** The live queue nodes of `client`, for the hand-off between its waiters. */
export function localNodes(client: ZkClient): ClientNodes {
  let nodes = clients.get(client);
  if (!nodes) {
    nodes = new ClientNodes(client);
    clients.set(client, nodes);
  }
  return nodes;
}
