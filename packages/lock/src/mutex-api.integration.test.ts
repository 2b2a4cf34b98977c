import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  sleep,
} from '@zkrx/test-support';
import { expireSession } from '@zkrx/testing';
import { defer, firstValueFrom, from, lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  acquire,
  heldLease,
  LockLostError,
  mergeMapLocked,
  mutex,
  runLocked,
  tryAcquire,
  withLock,
} from './index';

describe('mutex API', () => {
  it('re-enters in the async context that holds the lock, with no second node', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const outer = await acquire(a!, path);
    await outer.run(async () => {
      const inner = await acquire(a!, path, { timeoutMs: 1_000 });
      expect(inner.node).toBe(outer.node);
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await childrenOf(a!, path)).toHaveLength(1);
      await inner.release();
      expect(inner.isHeld).toBe(false);
      expect(outer.isHeld).toBe(true);
      expect(await tryAcquire(b!, path)).toBeNull();
    });
    // Outside the context, the same client is just another contender.
    expect(await tryAcquire(a!, path)).toBeNull();
    // Opting out inside the context queues a second node like anyone else.
    await outer.run(async () => {
      expect(await tryAcquire(a!, path, { reentrant: false })).toBeNull();
    });
    await outer.release();
    expect(await childrenOf(a!, path)).toEqual([]);
  });

  it('re-enters from work guarded by withLock and runLocked', async () => {
    const client = await connectedClient();
    const path = lockPath();
    const nodes = await runLocked(client, path, async (lease) => {
      const nested = await firstValueFrom(
        defer(() => runLocked(client, path, (inner) => inner.node)).pipe(withLock(client, path)),
      );
      expect(heldLease(client, path)?.fencingToken).toBe(lease.fencingToken);
      return [lease.node, nested];
    });
    expect(nodes[0]).toBe(nodes[1]);
    expect(await childrenOf(client, path)).toEqual([]);
    expect(heldLease(client, path)).toBeUndefined();
  });

  it('withLock runs the work only while holding and unsubscribes it when the lock is lost', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const blocker = await acquire(b!, path);
    const started: number[] = [];
    let stopped = false;
    const work = defer(() => {
      started.push(Date.now());
      return new Promise<never>(() => {});
    });
    const errors: unknown[] = [];
    const subscription = work
      .pipe(withLock(a!, path))
      .subscribe({ error: (error: unknown) => errors.push(error) });
    subscription.add(() => {
      stopped = true;
    });
    await sleep(100);
    expect(started).toEqual([]);
    await blocker.release();
    await vi.waitUntil(() => started.length === 1);
    await expireSession(a!);
    await vi.waitUntil(() => errors.length === 1);
    expect(errors[0]).toBeInstanceOf(LockLostError);
    expect(stopped).toBe(true);
  });

  it('mergeMapLocked processes items under their own key: one key never overlaps, different keys run in parallel', async () => {
    const client = await connectedClient();
    const root = lockPath('orders');
    const logs = new Map<string, IntervalLog>();
    let inside = 0;
    let maxInside = 0;
    // The first holder of each key stays until all three keys are held: they only get out if
    // different keys run in parallel (six in flight cover the three keys).
    let firstsIn = 0;
    let allKeysIn: () => void = () => {};
    const allKeys = new Promise<void>((resolve) => {
      allKeysIn = resolve;
    });
    const items = Array.from({ length: 24 }, (_, index) => ({ id: `k${index % 3}`, index }));
    const results = await lastValueFrom(
      from(items).pipe(
        mergeMapLocked(
          (item) => `${root}/${item.id}`,
          async (item) => {
            const log = logs.get(item.id) ?? new IntervalLog(1);
            logs.set(item.id, log);
            const record = log.enter(String(item.index));
            inside += 1;
            maxInside = Math.max(maxInside, inside);
            if (log.holds.length === 1) {
              firstsIn += 1;
              if (firstsIn === 3) allKeysIn();
              await allKeys;
            }
            await sleep(1);
            inside -= 1;
            log.exit(record);
            return item.index;
          },
          { client, concurrency: 6 },
        ),
        toArray(),
      ),
    );
    expect(results.sort((x, y) => x - y)).toEqual(items.map((item) => item.index));
    for (const log of logs.values()) expect(log.violations).toEqual([]);
    expect(maxInside).toBe(3);
  });

  it('tryAcquire never waits and leaves no node when the lock is taken', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath();
    const lease = await acquire(a!, path);
    // a holds for as long as it likes: an answer at all means tryAcquire did not wait.
    expect(await tryAcquire(b!, path)).toBeNull();
    expect(await childrenOf(a!, path)).toHaveLength(1);
    await lease.release();
  });

  it('fencing tokens keep increasing when the (container) lock path is recreated', async () => {
    const client = await connectedClient();
    const path = lockPath();
    const first = await acquire(client, path);
    await first.release();
    await client.promises.delete(path);
    const second = await acquire(client, path);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await second.release();
  });

  it('supports await using', async () => {
    const client = await connectedClient();
    const path = lockPath();
    {
      await using lease = await acquire(client, path);
      expect(lease.isHeld).toBe(true);
    }
    expect(await childrenOf(client, path)).toEqual([]);
  });

  it.each([
    ['a relative path', 'locks/x', {}, 'InvalidPath'],
    ['the root', '/', {}, 'InvalidPath'],
    ['an empty segment', '/locks//x', {}, 'InvalidPath'],
    [
      'a path inside a lock node',
      '/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000001/x',
      {},
      'InvalidPath',
    ],
    ['a kazoo lock node', '/locks/abc__lock__0000000001/x', {}, 'InvalidPath'],
    ['a negative timeout', '/locks/ok', { timeoutMs: -1 }, 'BadArguments'],
    ['a NaN timeout', '/locks/ok', { timeoutMs: Number.NaN }, 'BadArguments'],
    ['an infinite timeout', '/locks/ok', { timeoutMs: Number.POSITIVE_INFINITY }, 'BadArguments'],
    ['an unknown suspended policy', '/locks/ok', { onSuspended: 'pray' }, 'BadArguments'],
    ['a signal that is not an AbortSignal', '/locks/ok', { signal: {} }, 'BadArguments'],
  ])('rejects %s with a typed error before creating anything', async (_, path, options, code) => {
    const client = await connectedClient();
    const before = await client.promises.children('/');
    await expect(acquire(client, path, options as never)).rejects.toMatchObject({ code });
    await expect(tryAcquire(client, path, options as never)).rejects.toMatchObject({ code });
    const errors: unknown[] = [];
    mutex(client, path, options as never).subscribe({
      error: (error: unknown) => errors.push(error),
    });
    expect(errors[0]).toMatchObject({ code });
    expect(await client.promises.children('/')).toEqual(before);
  });

  it('rejects something that is not a client', async () => {
    await expect(acquire({} as never, '/locks/x')).rejects.toMatchObject({ code: 'BadArguments' });
    expect(() =>
      of(1).pipe(
        mergeMapLocked(
          (x) => `/l/${x}`,
          (x) => of(x),
          {} as never,
        ),
      ),
    ).toThrow(/client/);
  });
});
