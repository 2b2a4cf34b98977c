/**
 * Guarded writes: the lock protects the data. Writes land only while the lock is held, even
 * when the holder has not heard that it lost it; every failure writes nothing.
 */
import { isZkError, op, type ZkClient, ZkError } from '@zkrx/core';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
} from '@zkrx/test-support';
import { expireSession, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  acquire,
  acquireAll,
  acquireSemaphore,
  LeaseReleasedError,
  LockLostError,
  requestRevoke,
} from './index';

/** A persistent scratch node for a test's data (removed with `removeScratch`). */
async function scratch(client: ZkClient): Promise<string> {
  const root = uniqueRoot('guarded');
  await client.promises.create(root);
  return root;
}

async function removeScratch(client: ZkClient, root: string): Promise<void> {
  for (const child of await childrenOf(client, root)) {
    await client.promises.delete(`${root}/${child}`);
  }
  await client.promises.delete(root);
}

async function dataOf(client: ZkClient, path: string): Promise<string | null> {
  try {
    return (await client.promises.get(path)).data.toString('utf8');
  } catch (error) {
    if (isZkError(error, 'NoNode')) return null;
    throw error;
  }
}

/** Resolves how the promise settled, without letting a rejection go unhandled meanwhile. */
function settled<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

describe('lease.guard', () => {
  it("applies the ops behind the lease's check and returns their results", async () => {
    const [client] = await connectedClients(1);
    const root = await scratch(client!);
    await client!.promises.create(`${root}/old`, 'x');
    await client!.promises.create(`${root}/config`, 'v1');
    const lease = await acquire(client!, lockPath());
    const results = await lease.guard([
      op.create(`${root}/job-`, 'payload', { sequential: true }),
      op.set(`${root}/config`, 'v2', 0),
      op.delete(`${root}/old`),
      op.check(`${root}/config`),
    ]);
    expect(results.map((result) => result.type)).toEqual(['create', 'set', 'delete', 'check']);
    expect(results[0]).toMatchObject({ path: `${root}/job-0000000002` });
    expect(results[1]).toMatchObject({ stat: { version: 1 } });
    expect(await dataOf(client!, `${root}/config`)).toBe('v2');
    expect(await dataOf(client!, `${root}/old`)).toBeNull();
    // No op: only the check — is the lock still held, as ZooKeeper sees it now?
    expect(await lease.guard([])).toEqual([]);
    await lease.release();
    await removeScratch(client!, root);
  });

  it("rejects with the caller's failing op (its code and index), writes nothing, keeps the lease", async () => {
    const [client] = await connectedClients(1);
    const root = await scratch(client!);
    const lease = await acquire(client!, lockPath());
    const error = await lease
      .guard([op.create(`${root}/made`, 'x'), op.delete(`${root}/missing`)])
      .catch((caught: unknown) => caught);
    expect(ZkError.isInstance(error)).toBe(true);
    expect(LockLostError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({ code: 'NoNode', opIndex: 1, path: `${root}/missing` });
    expect((error as Error).message).toMatch(/^guard of .*: op 1 \(delete\)/);
    expect(await dataOf(client!, `${root}/made`)).toBeNull();
    expect(lease.isHeld).toBe(true);
    await lease.release();
    await removeScratch(client!, root);
  });

  it('refuses bad input with typed errors before anything is sent', async () => {
    const [client] = await connectedClients(1);
    const root = await scratch(client!);
    const lease = await acquire(client!, lockPath());
    const made = op.create(`${root}/made`, 'x');
    await expect(lease.guard('nope' as never)).rejects.toMatchObject({ code: 'BadArguments' });
    await expect(lease.guard([made, { type: 'get', path: root }] as never)).rejects.toMatchObject({
      code: 'BadArguments',
      opIndex: 1,
    });
    await expect(lease.guard([made, null] as never)).rejects.toMatchObject({
      code: 'BadArguments',
      opIndex: 1,
    });
    // multi's own checks, indexed in the caller's ops.
    await expect(lease.guard([made, op.set('no-slash', 'x')])).rejects.toMatchObject({
      code: 'InvalidPath',
      opIndex: 1,
    });
    await expect(lease.guard([made, op.set(root, 42 as never)])).rejects.toMatchObject({
      code: 'BadArguments',
      opIndex: 1,
    });
    // The lease's own node is the lock: release() removes it.
    await expect(lease.guard([made, op.delete(lease.node)])).rejects.toMatchObject({
      code: 'BadArguments',
      opIndex: 1,
    });
    await expect(lease.guard([op.set(lease.node, 'mine')])).rejects.toMatchObject({
      code: 'BadArguments',
    });
    expect(await dataOf(client!, `${root}/made`)).toBeNull();
    // A check of another path is an op like any other.
    await expect(lease.guard([op.check(root), made])).resolves.toHaveLength(2);
    expect(lease.isHeld).toBe(true);
    await lease.release();
    await removeScratch(client!, root);
  });

  it('writes nothing once the session was expired from outside (the client knows: no round trip)', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const root = await scratch(other);
    // `continue`: the dropped connection does not end the lease first, the expiry does.
    const lease = await acquire(client, lockPath(), { onSuspended: 'continue' });
    const lost = firstValueFrom(lease.lost$);
    await expireSession(client);
    expect(lease.isHeld).toBe(false);
    // Nothing can cross the proxy now: a guard that needed the server would never settle.
    proxy.pause();
    const error = await lease
      .guard([op.create(`${root}/late`, 'x')])
      .catch((caught: unknown) => caught);
    proxy.resume();
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'session-expired', path: lease.path });
    // The lease's own error: what `lost$` emitted and `signal` aborted with.
    expect(error).toBe(await lost);
    expect(lease.signal.reason).toBe(error);
    expect(await dataOf(other, `${root}/late`)).toBeNull();
    await removeScratch(other, root);
  });

  for (const onSuspended of ['release', 'continue'] as const) {
    it(`writes nothing after its session was expired on the server, before the client heard of it (onSuspended: ${onSuspended})`, async () => {
      const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
      const other = await connectedClient();
      const { connectString } = await testZooKeeper();
      const root = await scratch(other);
      const path = lockPath();
      const lease = await acquire(client, path, { onSuspended });
      const credentials = client.sessionCredentials()!;
      // The client hears nothing from now on: its session is ended on the server directly.
      proxy.pause();
      await expireSession({ connectString, ...credentials });
      // Another client takes the lock and writes: the lock protects this data now.
      const next = await acquire(other, path);
      await next.guard([op.create(`${root}/owner`, 'next')]);
      // The old holder still believes it holds, and sends its write. What it sends goes to a
      // connection the server closed when the session was taken over and closed: the server never
      // reads it. The client learns so (ConnectionLoss), then learns the lease's fate.
      expect(lease.isHeld).toBe(true);
      expect(client.state).toBe('connected');
      const outcome = settled(lease.guard([op.set(`${root}/owner`, 'stale')]));
      proxy.resume();
      const { error } = await outcome;
      expect(LockLostError.isInstance(error)).toBe(true);
      // Under `release` the dropped connection ended the lease; under `continue`, the expiry.
      expect((error as LockLostError).reason).toBe(
        onSuspended === 'release' ? 'suspended' : 'session-expired',
      );
      // The write was in flight as the connection dropped: the cause says its fate was unknown
      // to the client (here, the server never read it).
      expect(isZkError((error as Error).cause, 'ConnectionLoss')).toBe(true);
      expect(await dataOf(other, `${root}/owner`)).toBe('next');
      expect(lease.isHeld).toBe(false);
      await next.release();
      await removeScratch(other, root);
    });
  }

  it('in flight when the connection drops, the lease living on: rejects the ConnectionLoss (it may have landed)', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const root = await scratch(other);
    const lease = await acquire(client, lockPath(), { onSuspended: 'continue' });
    // The transaction reaches the server and is applied; its reply never comes back.
    proxy.holdReplies();
    const outcome = settled(lease.guard([op.create(`${root}/applied`, 'x')]));
    await vi.waitUntil(async () => (await dataOf(other, `${root}/applied`)) === 'x');
    proxy.cut();
    proxy.holdReplies(false);
    const { error } = await outcome;
    // Back on the same session, the lease held: not a loss, and not known either way.
    expect(LockLostError.isInstance(error)).toBe(false);
    expect(isZkError(error, 'ConnectionLoss')).toBe(true);
    expect(client.state).toBe('reconnected');
    await vi.waitUntil(() => lease.state === 'held');
    await lease.release();
    await removeScratch(other, root);
  });

  it('writes nothing after an operator deleted its node, before the client heard of it', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const operator = await connectedClient();
    const root = await scratch(operator);
    const lease = await acquire(client, lockPath());
    proxy.pause();
    await operator.promises.delete(lease.node);
    expect(lease.isHeld).toBe(true);
    const outcome = settled(lease.guard([op.create(`${root}/late`, 'x')]));
    proxy.resume();
    const { error } = await outcome;
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'node-deleted', path: lease.path });
    expect(await dataOf(operator, `${root}/late`)).toBeNull();
    // The lease knows too (told by the guard or by its watch, whichever came first).
    expect(lease.state).toBe('lost');
    expect(lease.signal.aborted).toBe(true);
    await removeScratch(operator, root);
  });

  it('writes nothing once lost as suspended (default policy), though its node is still there', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const root = await scratch(other);
    const lease = await acquire(client, lockPath());
    proxy.refuse(true);
    proxy.cut();
    await vi.waitUntil(() => lease.state === 'lost');
    // The session lives on the server, and so does the node: a check there would pass. The
    // holder was told to stop, so the guard refuses here (no connection: no round trip).
    expect(await other.promises.exists(lease.node)).not.toBeNull();
    const error = await lease
      .guard([op.create(`${root}/late`, 'x')])
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'LockLostError', reason: 'suspended' });
    proxy.refuse(false);
    expect(await dataOf(other, `${root}/late`)).toBeNull();
    await removeScratch(other, root);
  });

  it('rejects at once after release, without a round trip', async () => {
    const { client, proxy } = await proxiedClient();
    const root = await scratch(client);
    const lease = await acquire(client, lockPath());
    await lease.release();
    proxy.pause();
    const error = await lease
      .guard([op.create(`${root}/late`, 'x')])
      .catch((caught: unknown) => caught);
    proxy.resume();
    expect(LeaseReleasedError.isInstance(error)).toBe(true);
    expect(await dataOf(client, `${root}/late`)).toBeNull();
    await removeScratch(client, root);
  });

  it('a re-entered lease released: its guard rejects, the outer lease still writes', async () => {
    const [client] = await connectedClients(1);
    const root = await scratch(client!);
    const path = lockPath();
    const outer = await acquire(client!, path);
    const inner = await outer.run(() => acquire(client!, path));
    expect(inner.node).toBe(outer.node);
    await inner.release();
    await expect(inner.guard([op.create(`${root}/inner`)])).rejects.toSatisfy(
      LeaseReleasedError.isInstance,
    );
    await outer.guard([op.create(`${root}/outer`)]);
    expect(await childrenOf(client!, root)).toEqual(['outer']);
    await outer.release();
    await removeScratch(client!, root);
  });

  it("while suspended (onSuspended: 'continue') waits for the connection, then the check decides", async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const root = await scratch(other);
    const lease = await acquire(client, lockPath(), { onSuspended: 'continue' });
    proxy.refuse(true);
    proxy.cut();
    await vi.waitUntil(() => lease.state === 'suspended');
    const outcome = settled(lease.guard([op.create(`${root}/while-away`, 'x')]));
    // Nothing can have been sent: no connection.
    expect(await dataOf(other, `${root}/while-away`)).toBeNull();
    proxy.refuse(false);
    const { value, error } = await outcome;
    expect(error).toBeUndefined();
    expect(value).toMatchObject([{ type: 'create', path: `${root}/while-away` }]);
    expect(await dataOf(other, `${root}/while-away`)).toBe('x');
    expect(client.state).toBe('reconnected');
    await lease.release();
    await removeScratch(other, root);
  });

  it('still writes when revoked: a revocation is a request, the lease is held until released', async () => {
    const [holder, other] = await connectedClients(2);
    const root = await scratch(other!);
    const lease = await acquire(holder!, lockPath(), { revocable: true });
    expect(await requestRevoke(other!, lease.node)).toBe(true);
    await firstValueFrom(lease.revoked$);
    // The holder flushes its last state before it lets go.
    await lease.guard([op.create(`${root}/checkpoint`, 'done')]);
    expect(await dataOf(other!, `${root}/checkpoint`)).toBe('done');
    await lease.release();
    await removeScratch(other!, root);
  });

  it('guards a semaphore lease by its own lease node', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const operator = await connectedClient();
    const root = await scratch(operator);
    const path = lockPath('semaphore');
    const lease = await acquireSemaphore(client, path, { leases: 2 });
    expect(lease.node.startsWith(`${path}/leases/`)).toBe(true);
    await lease.guard([op.create(`${root}/one`)]);
    proxy.pause();
    await operator.promises.delete(lease.node);
    const outcome = settled(lease.guard([op.create(`${root}/two`)]));
    proxy.resume();
    const { error } = await outcome;
    expect(error).toMatchObject({ name: 'LockLostError', reason: 'node-deleted' });
    expect(await childrenOf(operator, root)).toEqual(['one']);
    await removeScratch(operator, root);
  });

  it('guards a multi-lock by every lease at once: one lost, nothing written', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const operator = await connectedClient();
    const root = await scratch(operator);
    const paths = [lockPath('p'), lockPath('q')];
    const all = await acquireAll(client, paths);
    const results = await all.guard([op.create(`${root}/both`, 'x')]);
    expect(results).toEqual([expect.objectContaining({ type: 'create' })]);
    const second = all.leases[1]!;
    proxy.pause();
    await operator.promises.delete(second.node);
    const outcome = settled(all.guard([op.create(`${root}/late`)]));
    proxy.resume();
    const { error } = await outcome;
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'node-deleted', path: second.path });
    expect(await childrenOf(operator, root)).toEqual(['both']);
    // The other lock was never lost, but a multi-lease guards all or nothing.
    expect(all.leases[0]!.isHeld).toBe(true);
    await expect(all.guard([op.create(`${root}/later`)])).rejects.toSatisfy(
      LockLostError.isInstance,
    );
    await all.release();
    await removeScratch(operator, root);
  });
});
