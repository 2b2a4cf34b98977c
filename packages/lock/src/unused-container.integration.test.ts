/**
 * A lock path that an acquisition made and gave up on before its node went in is removed again:
 * ZooKeeper reaps only containers that once had a child, so it would stay for good (the soak's
 * `leftover` check found such paths in multi-lock and mutex mode). The give-up is placed exactly
 * between making the path and creating the node, and a lost reply is made by answering
 * ConnectionLoss for a create that ZooKeeper applied: the client is wrapped to do that —
 * ZooKeeper itself is real.
 */
import { type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { connectedClient, lockPath } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { acquire, acquireSemaphore, type Lease } from './index';

type Create = ZkClient['promises']['create'];

/** `client`, whose `promises.create` is `create` (given the real one): ZooKeeper stays real. */
function withCreate(
  client: ZkClient,
  create: (real: Create, ...args: Parameters<Create>) => ReturnType<Create>,
): ZkClient {
  const promises = new Proxy(client.promises, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (key === 'create')
        return (...args: Parameters<Create>) => create(value.bind(target), ...args);
      return typeof value === 'function' ? value.bind(target) : value;
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

const isPath = (args: Parameters<Create>) => args[2]?.mode === 'container';

/** `client`, which awaits `then` once a container (the lock path) is made. */
function afterPathMade(client: ZkClient, then: () => void | Promise<void>): ZkClient {
  return withCreate(client, async (real, ...args) => {
    const made = await real(...args);
    if (isPath(args)) await then();
    return made;
  });
}

const replyLost = () => new ZkError(ZkErrorCode.ConnectionLoss, 'the reply was lost (test)');

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

type Take = (client: ZkClient, path: string, signal: AbortSignal) => Promise<unknown>;

const takeMutex: Take = (client, path, signal) => acquire(client, path, { signal });

/**
 * Runs `take` on a fresh path through the client `wrap` makes (given the abort to call) and
 * expects it to give up with AbortError leaving no never-used container: `close()` waits for the
 * tracked removal, and what may remain are containers that once had a child (the reaper's).
 */
async function givesUpLeavingNothing(
  take: Take,
  wrap: (client: ZkClient, abort: () => void) => ZkClient,
): Promise<void> {
  const client = await connectedClient();
  const observer = await connectedClient();
  const path = lockPath();
  const controller = new AbortController();
  const error = await take(
    wrap(client, () => controller.abort()),
    path,
    controller.signal,
  ).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect((error as Error).name).toBe('AbortError');
  await client.close();
  expect(await neverUsed(observer, path)).toEqual([]);
}

describe('a lock path made and given up on before the node went in', () => {
  it.each<[string, Take]>([
    ['mutex', takeMutex],
    ['semaphore', (client, path, signal) => acquireSemaphore(client, path, { leases: 2, signal })],
  ])('%s: the container it made is removed, not left for good', (_, take) =>
    givesUpLeavingNothing(take, afterPathMade),
  );

  it('removes it when the reply of the path create was lost and the wait given up', () =>
    givesUpLeavingNothing(takeMutex, (client, abort) =>
      withCreate(client, async (real, ...args) => {
        if (!isPath(args)) return real(...args);
        await real(...args);
        abort();
        throw replyLost();
      }),
    ));

  it('removes it when the reply was lost and the node create then failed too', () =>
    givesUpLeavingNothing(takeMutex, (client, abort) => {
      let pathMade = false;
      return withCreate(client, async (real, ...args) => {
        if (isPath(args)) {
          await real(...args);
          pathMade = true;
          throw replyLost();
        }
        if (!pathMade) return real(...args);
        // The node's create, after the lost reply: given up before it is sent.
        abort();
        throw replyLost();
      });
    }));

  it("removes it when the path was made by a create sent in front of the node's", async () => {
    // A client whose lock paths were missing lately sends the path's create in front of its
    // node's (queue-node.ts, `makePathAhead`): two acquisitions on missing paths teach it.
    const client = await connectedClient();
    const observer = await connectedClient();
    const path = lockPath();
    const controller = new AbortController();
    let armed = false;
    let sentAhead = false;
    const wrapped = withCreate(client, async (real, ...args) => {
      if (!armed) return real(...args);
      if (isPath(args)) {
        sentAhead = true;
        return real(...args);
      }
      // Our node's create, sent right behind the path's: given up before it is sent.
      controller.abort();
      return real(...args);
    });
    for (const name of ['first', 'second']) {
      const lease = await acquire(wrapped, `${path}-${name}`);
      await lease.release();
    }
    armed = true;
    const error = await acquire(wrapped, path, { signal: controller.signal }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('AbortError');
    expect(sentAhead).toBe(true);
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
