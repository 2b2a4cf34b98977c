/**
 * ZooKeeper's side of a run: the life of every znode under the soak's root (created when, by
 * which session, deleted when and how), rebuilt from the quorum's transaction log.
 */
import type { Txn } from './txn-log';

/** How a znode ended. */
export type DeletedBy = 'delete' | 'session-close' | 'container-reaper';

/** One znode's life. Times are the leader's wall clock (ms) as logged. */
export interface ZnodeLife {
  readonly path: string;
  readonly parent: string;
  readonly name: string;
  /** The creating transaction's zxid: the fencing token of a lock node. */
  readonly czxid: number;
  readonly created: number;
  /** The session that created it (hex). */
  readonly session: string;
  readonly ephemeral: boolean;
  readonly container: boolean;
  deleted?: number;
  deletedZxid?: number;
  deletedBy?: DeletedBy;
  /** The session whose transaction deleted it (for `delete`). */
  deleterSession?: string;
}

/** The lives of the znodes under a root, indexed for the checker. */
export interface ZooKeeperTruth {
  /** Every life, in creation order. */
  readonly lives: readonly ZnodeLife[];
  /** Lives by full path (a path can live several times: a container recreated). */
  readonly byPath: ReadonlyMap<string, readonly ZnodeLife[]>;
  /** Lives of the children of a parent path, in creation order. */
  readonly childrenOf: ReadonlyMap<string, readonly ZnodeLife[]>;
  /** Sessions' closes (expiry or close), by session: the close's time. */
  readonly sessionCloses: ReadonlyMap<string, number>;
  /** How many lock-path containers the server reaped. */
  readonly containersReaped: number;
  /** Transactions of the root's subtree. */
  readonly transactions: number;
  /** Anomalies met while replaying (a create of a live path, a delete of an unknown one). */
  readonly anomalies: readonly string[];
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

function under(root: string, path: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/**
 * Replays the log's creates and deletes under `root`.
 *
 * @param txns The quorum's transactions, in zxid order.
 * @param root The run's root path.
 * @return The znodes' lives.
 */
export function buildTruth(txns: readonly Txn[], root: string): ZooKeeperTruth {
  const lives: ZnodeLife[] = [];
  const live = new Map<string, ZnodeLife>();
  const bySession = new Map<string, Set<ZnodeLife>>();
  const byPath = new Map<string, ZnodeLife[]>();
  const childrenOf = new Map<string, ZnodeLife[]>();
  const sessionCloses = new Map<string, number>();
  const anomalies: string[] = [];
  let containersReaped = 0;
  let transactions = 0;

  const end = (life: ZnodeLife, txn: Txn, by: DeletedBy) => {
    life.deleted = txn.time;
    life.deletedZxid = txn.zxid;
    life.deletedBy = by;
    if (by === 'delete') life.deleterSession = txn.session;
    live.delete(life.path);
    bySession.get(life.session)?.delete(life);
  };

  for (const txn of txns) {
    let touched = false;
    for (const op of txn.ops) {
      if (op.op === 'create' && under(root, op.path)) {
        touched = true;
        if (live.has(op.path)) anomalies.push(`zxid ${txn.zxid}: create of live ${op.path}`);
        const parent = parentOf(op.path);
        const life: ZnodeLife = {
          path: op.path,
          parent,
          name: op.path.slice(parent === '/' ? 1 : parent.length + 1),
          czxid: txn.zxid,
          created: txn.time,
          session: txn.session,
          ephemeral: op.ephemeral,
          container: op.container,
        };
        lives.push(life);
        live.set(op.path, life);
        if (op.ephemeral) {
          const owned = bySession.get(txn.session) ?? new Set<ZnodeLife>();
          bySession.set(txn.session, owned);
          owned.add(life);
        }
        const paths = byPath.get(op.path);
        if (paths) paths.push(life);
        else byPath.set(op.path, [life]);
        const siblings = childrenOf.get(parent);
        if (siblings) siblings.push(life);
        else childrenOf.set(parent, [life]);
      } else if (op.op === 'delete' && under(root, op.path)) {
        touched = true;
        const life = live.get(op.path);
        if (!life) anomalies.push(`zxid ${txn.zxid}: delete of unknown ${op.path}`);
        else {
          end(life, txn, op.container ? 'container-reaper' : 'delete');
          if (op.container) containersReaped += 1;
        }
      } else if (op.op === 'close-session') {
        const owned = bySession.get(txn.session);
        sessionCloses.set(txn.session, txn.time);
        const paths = op.paths ?? [...(owned ?? [])].map((life) => life.path);
        for (const path of paths) {
          if (!under(root, path)) continue;
          touched = true;
          const life = live.get(path);
          if (life) end(life, txn, 'session-close');
        }
      }
    }
    if (touched) transactions += 1;
  }
  return {
    lives,
    byPath,
    childrenOf,
    sessionCloses,
    containersReaped,
    transactions,
    anomalies,
  };
}
