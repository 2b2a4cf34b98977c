/**
 * Guarded writes: the caller's ops in one transaction behind a `check` of each held lock node,
 * so they land only if every lock is still held at the zxid ZooKeeper applies them.
 *
 * Why "check + writes in one transaction" means "written only while held" — for one lock node,
 * not a path:
 * - a transaction (`multi`) is atomic: every op is applied at one zxid, or none is; a failed
 *   `check` fails the whole of it;
 * - a lock node is EPHEMERAL: it exists exactly while its session lives (the session's close
 *   deletes it in the same txn that ends the session, and a request of a closed or closing session
 *   is refused with SessionExpired, its ops never evaluated), and while it exists its holder holds
 *   (each recipe's rule: nothing can come before a holding node while it exists, queue.ts);
 * - its name is unique (a UUID in the protected prefix, `_c_<uuid>-`): no later node, not even
 *   one at the same path after the lock path was reaped and made again, can have that name, so a
 *   `check` that passes found OUR node, not a later holder's.
 * So the check passes at zxid Z only if we hold at Z, and the writes are applied at that Z. What
 * the client knows or believes plays no part: a client that has not heard of its expiry (a paused
 * process, a partition) may send the transaction, and it does not land — the server closed the
 * session's connections when it ended it, and refuses its requests; a node deleted by someone
 * else fails the check.
 */
import {
  isZkError,
  op,
  type TransactionOp,
  type TransactionResult,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { LeaseReleasedError, LockLostError, type LockLostReason } from './errors';
import type { Hold } from './hold';
import { tracedGuard } from './telemetry';

const opTypes: ReadonlySet<unknown> = new Set(['create', 'delete', 'set', 'check']);

/**
 * Checks a guarded write's ops before anything is sent: an array of `op.*` results, none of
 * which rewrites or deletes a held lock node (that is `release()`'s job, and the node's data is
 * what Curator peers read). Deeper checks (paths, data, versions) are `multi`'s, re-indexed.
 * Throws ZkError `BadArguments` naming the op's index.
 */
export function validateGuardOps(
  ops: unknown,
  heldNodes: readonly string[],
  what: string,
): readonly TransactionOp[] {
  if (!Array.isArray(ops)) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `${what}: ops must be an array of op.create/set/delete/check results`,
    );
  }
  ops.forEach((entry: unknown, index) => {
    const type = (entry as { type?: unknown } | null)?.type;
    if (typeof entry !== 'object' || entry === null || !opTypes.has(type)) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `${what}: op ${index}: expected an op from op.create/set/delete/check, got ${describe(entry)}`,
        { opIndex: index },
      );
    }
    const path = (entry as { path?: unknown }).path;
    if ((type === 'set' || type === 'delete') && heldNodes.includes(path as string)) {
      throw new ZkError(
        ZkErrorCode.BadArguments,
        `${what}: op ${index}: ${type} of the held lock node ${String(path)}: release() removes it, and its data is the holder's`,
        { opIndex: index, path: path as string },
      );
    }
  });
  return ops as readonly TransactionOp[];
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** What a failed guarded transaction means, from its error and the number of checks before the caller's ops. */
export type GuardFailure =
  /** The check of `holds[index]` failed: its node was gone (or its session) when ZooKeeper applied it. Nothing was written. */
  | { readonly kind: 'lost'; readonly index: number; readonly reason: LockLostReason | undefined }
  /** The connection dropped with the transaction in flight: applied or not is unknown. */
  | { readonly kind: 'in-flight' }
  /** One of the caller's ops failed (or was refused before sending): its error, indexed in the caller's ops. */
  | { readonly kind: 'op'; readonly error: ZkError }
  /** Anything else, as it is. */
  | { readonly kind: 'other'; readonly error: unknown };

/**
 * Classifies a guarded transaction's failure: pure, so unit-tested without a server.
 *
 * - `SessionExpired` (for the whole request, or for a check op): the session is gone, nothing
 *   was written — the server refuses a closed session's requests before evaluating them, and the
 *   client fails with it only requests it never sent (`reason` session-expired).
 * - `NoNode` on check `i`: the node was gone when the transaction was applied. The transaction
 *   was sent on the hold's own session (a guard is only sent while the client is connected on it)
 *   and evaluated, so that session was alive then, with its ephemeral nodes: someone deleted
 *   ours (`reason` undefined: the lease's own reason if it has one, else node-deleted).
 * - `ConnectionLoss`, `OperationTimeout`: in flight when the connection dropped.
 */
export function classifyGuardFailure(error: unknown, checks: number, what: string): GuardFailure {
  if (!isZkError(error)) return { kind: 'other', error };
  if (error.code === ZkErrorCode.SessionExpired) {
    return { kind: 'lost', index: 0, reason: 'session-expired' };
  }
  if (error.code === ZkErrorCode.ConnectionLoss || error.code === ZkErrorCode.OperationTimeout) {
    return { kind: 'in-flight' };
  }
  const index = error.opIndex;
  if (index === undefined) return { kind: 'other', error };
  if (index < checks) {
    return error.code === ZkErrorCode.NoNode
      ? { kind: 'lost', index, reason: undefined }
      : { kind: 'other', error };
  }
  const own = index - checks;
  const message = /^multi: op \d+/.test(error.message)
    ? error.message.replace(/^multi: op \d+/, `${what}: op ${own}`)
    : `${what}: op ${own}: ${error.message}`;
  return {
    kind: 'op',
    error: new ZkError(error.code, message, {
      path: error.path,
      rc: error.rc,
      opIndex: own,
      cause: error,
    }),
  };
}

/** Why a hold can no longer guard anything (lost or released), or undefined while it can. */
function endedReason(hold: Hold): Error | undefined {
  if (hold.isHeld) return undefined;
  return hold.lostError ?? new LeaseReleasedError(hold.path);
}

function connectedOn(hold: Hold): boolean {
  return hold.session.status === 'connected';
}

/**
 * Resolves once the client is connected on the holds' session again, or one of the holds ended
 * (lost, released, the client closed). Bounded: a session without a connection for its whole
 * timeout is given up as expired by the client, which ends every hold of it.
 */
function untilSettled(holds: readonly Hold[]): Promise<void> {
  const first = holds[0] as Hold;
  return new Promise<void>((resolve) => {
    let done = false;
    const subscriptions: { unsubscribe(): void }[] = [];
    const check = () => {
      if (done) return;
      if (!holds.every((hold) => hold.isHeld) || connectedOn(first)) {
        done = true;
        for (const subscription of subscriptions) subscription.unsubscribe();
        resolve();
      }
    };
    subscriptions.push(first.session.status$.subscribe({ next: check, complete: check }));
    for (const hold of holds) {
      subscriptions.push(hold.state$.subscribe({ next: check, complete: check }));
    }
    if (done) for (const subscription of subscriptions) subscription.unsubscribe();
    check();
  });
}

/**
 * Applies `ops` in one transaction behind a `check` of every hold's node (see the module header
 * for why that writes only while every hold is held). Resolves the results of `ops`; rejects with
 * LockLostError when a check failed (nothing written), the ZkError of the caller's failing op
 * (`opIndex` in `ops`), or — when the connection dropped with the transaction in flight — a
 * LockLostError if that ended a hold (its `cause` says the outcome is unknown), else the
 * connection's ZkError.
 *
 * @param holds The held lock nodes, all of one client's session.
 * @param ops The caller's ops (`op.create/set/delete/check`).
 * @param what Names the guard in messages (`guard of /locks/x`).
 * @param released True when the caller's lease was released (its hold may live on, re-entered).
 */
export function guardedWrite(
  holds: readonly Hold[],
  ops: unknown,
  what: string,
  released = false,
): Promise<TransactionResult[]> {
  const first = (holds[0] as Hold).labels;
  const labels =
    holds.length === 1
      ? first
      : { kind: 'multi', name: first.name, path: holds.map((hold) => hold.path).join(',') };
  return tracedGuard(labels, Array.isArray(ops) ? ops.length : 0, () =>
    writeGuarded(holds, ops, what, released),
  );
}

async function writeGuarded(
  holds: readonly Hold[],
  ops: unknown,
  what: string,
  released: boolean,
): Promise<TransactionResult[]> {
  const checked = validateGuardOps(
    ops,
    holds.map((hold) => hold.node),
    what,
  );
  // Fast path: a lease known lost or released stays so (its states are terminal), so the answer
  // is known without a round trip. Not sending is always safe; and it is needed, not only
  // quicker: a lease lost as `suspended` (default policy) may still have its node on the server,
  // where a check would pass although its holder was told to stop; a released lease's node may
  // still be there for a re-entrant sibling, or for the round trip its delete takes.
  if (released) throw new LeaseReleasedError((holds[0] as Hold).path);
  // The session's clock first: a hold whose session the servers may be about to expire is lost
  // now — after a stall of this process, before the client's heartbeat says so at its next
  // check — and nothing is sent.
  for (const hold of holds) hold.session.statusNow();
  const ended = holds.map(endedReason).find((reason) => reason !== undefined);
  if (ended) throw ended;
  const first = holds[0] as Hold;
  if (!connectedOn(first)) {
    // Suspended (policy `continue`): wait for the connection, or the loss. Sent now, the
    // transaction would wait in the client and fail with ConnectionLoss on a failed attempt,
    // unknown whether applied; sent once reconnected, the check decides.
    await untilSettled(holds);
    const after = holds.map(endedReason).find((reason) => reason !== undefined);
    if (after) throw after;
  }
  try {
    const results = await first.client.promises.multi([
      ...holds.map((hold) => op.check(hold.node)),
      ...checked,
    ]);
    return results.slice(holds.length);
  } catch (error) {
    throw await guardError(holds, error, what);
  }
}

/** The error a failed guarded transaction rejects with. */
async function guardError(holds: readonly Hold[], error: unknown, what: string): Promise<unknown> {
  const failure = classifyGuardFailure(error, holds.length, what);
  switch (failure.kind) {
    case 'op':
      return failure.error;
    case 'other':
      return failure.error;
    case 'lost': {
      const hold = holds[failure.index] as Hold;
      // The server said the node (or its session) is gone: a node's name is never made again,
      // so the lease is lost for good — tell it now rather than when its watch fires.
      const reason = failure.reason ?? hold.lostError?.reason ?? 'node-deleted';
      hold.lose(reason);
      return hold.lostError ?? new LockLostError(hold.path, reason);
    }
    case 'in-flight': {
      // Applied or not, ZooKeeper decided while the node existed (the check): what is unknown is
      // only whether the writes landed. Wait for the session's verdict to say whether the lease
      // lives on; if it ended, say so, with the uncertainty as the cause.
      await untilSettled(holds);
      const lost = holds.find((hold) => hold.lostError !== undefined);
      if (!lost?.lostError) return error;
      const cause = new ZkError(
        (error as ZkError).code,
        `${what}: the connection dropped with the transaction in flight: it may have been applied (then while the lock was held), or not`,
        { cause: error },
      );
      return new LockLostError(lost.path, lost.lostError.reason, { cause });
    }
  }
}
