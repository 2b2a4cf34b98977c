/**
 * A lock path that an acquisition made and gave up on before its node went in is removed again:
 * ZooKeeper reaps only containers that once had a child, so it would stay for good (the soak's
 * `leftover` check found one in multi-lock mode). The give-up is placed exactly between making
 * the path and creating the node: the client is wrapped so that the abort comes the moment
 * the path's create has answered — ZooKeeper itself is real.
 */
import type { ZkClient } from '@zkrx/core';
import { connectedClient, lockPath } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { acquire, acquireSemaphore, type Lease } from './index';

/** `client`, which awaits `then` once a container (the lock path) is made. */
function afterPathMade(client: ZkClient, then: () => void | Promise<void>): ZkClient {
  const promises = new Proxy(client.promises, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (key !== 'create') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<ZkClient['promises']['create']>) => {
        const made = await value.apply(target, args);
        if (args[2]?.mode === 'container') await then();
        return made;
      };
    },
  });
  return new Proxy(client, {
    get(target, key) {
      if (key === 'promises') return promises;
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The znodes at and under `path` that never had a child: the reaper would leave them for good. */
async function neverUsed(client: ZkClient, path: string): Promise<string[]> {
  const stat = await client.promises.exists(path);
  if (!stat) return [];
  if (stat.cversion === 0) return [path];
  const found: string[] = [];
  for (const child of await client.promises.children(path)) {
    found.push(...(await neverUsed(client, `${path}/${child}`)));
  }
  return found;
}

describe('a lock path made and given up on before the node went in', () => {
  it.each([
    [
      'mutex',
      (client: ZkClient, path: string, signal: AbortSignal) => acquire(client, path, { signal }),
    ],
    [
      'semaphore',
      (client: ZkClient, path: string, signal: AbortSignal) =>
        acquireSemaphore(client, path, { leases: 2, signal }),
    ],
  ])('%s: the container it made is removed, not left for good', async (_, take) => {
    const client = await connectedClient();
    const observer = await connectedClient();
    const path = lockPath();
    const controller = new AbortController();
    const error = await take(
      afterPathMade(client, () => controller.abort()),
      path,
      controller.signal,
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('AbortError');
    // close() waits for the tracked removal. What may remain are containers that once had a
    // child (the reaper's), never one that never had any.
    await client.close();
    expect(await neverUsed(observer, path)).toEqual([]);
  });

  it('keeps a path whose queue got a node in the gap: the holder is not disturbed', async () => {
    const client = await connectedClient();
    const holder = await connectedClient();
    const path = lockPath();
    const controller = new AbortController();
    let held: Lease | undefined;
    // The other client takes the lock between the path being made and our create; then we give up.
    const inTheGap = async () => {
      held = await acquire(holder, path);
      controller.abort();
    };
    const error = await acquire(afterPathMade(client, inTheGap), path, {
      signal: controller.signal,
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('AbortError');
    await client.close();
    expect(held?.isHeld).toBe(true);
    expect(await holder.promises.exists(held!.node)).not.toBeNull();
    await held?.release();
  });
});
