/**
 * Test support for the interop suites: zkrx clients on the run's ZooKeeper, a root per test
 * that must be empty of lock nodes at the end and is then removed.
 */
import { createClient, isZkError, joinPath, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { childrenOf, untilEmpty } from '@zkrx/test-support';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';

/** A connected zkrx client with the peers' session timeout; the caller closes it. */
export async function openClient(): Promise<ZkClient> {
  const { connectString } = await testZooKeeper();
  const client = createClient({ connect: connectString, sessionTimeoutMs: 4_000 });
  await client.connected();
  return client;
}

/** A fresh root for one test (created by whoever locks under it first). */
export function interopRoot(): string {
  return uniqueRoot('interop');
}

// Shared with the recipes' suites: `untilEmpty` waits out releases that finish in the background.
export { childrenOf, untilEmpty };

/** Every node under `root` (deepest first), `root` excluded. */
export async function descendantsOf(client: ZkClient, root: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await childrenOf(client, root)) {
    const child = joinPath(root, name);
    found.push(...(await descendantsOf(client, child)), child);
  }
  return found;
}

/**
 * Deletes `root` and everything under it, children first. Nodes that vanish meanwhile (Curator's
 * containers, ephemerals of closing sessions) are fine.
 */
export async function removeTree(client: ZkClient, root: string): Promise<void> {
  for (const node of [...(await descendantsOf(client, root)), root]) {
    try {
      await client.promises.delete(node);
    } catch (error) {
      if (!isZkError(error, ZkErrorCode.NoNode)) throw error;
    }
  }
}

/** What ZooKeeper reports as the ephemeral owner of a CONTAINER node (Long.MIN_VALUE). */
const CONTAINER_OWNER = '8000000000000000';

/**
 * The lock nodes left under `root`: ephemeral nodes (any recipe's queue entries). The parents
 * (containers, kazoo's persistent lock paths) are not counted.
 */
export async function ephemeralsUnder(client: ZkClient, root: string): Promise<string[]> {
  const left: string[] = [];
  for (const node of await descendantsOf(client, root)) {
    const stat = await client.promises.exists(node);
    if (stat && stat.ephemeralOwner !== '0' && stat.ephemeralOwner !== CONTAINER_OWNER) {
      left.push(node);
    }
  }
  return left;
}

/**
 * The sequence ZooKeeper appended to a recipe node's name (`%010d`, so `-` only for a wrapped
 * counter: the dash of Curator's `lock-` is the marker's, not a sign).
 */
export function sequence(name: string): number {
  const match = /(?:lock-|__lock__|__rlock__|__READ__|__WRIT__|latch-|lease-)(-?\d{9,10})$/.exec(
    name,
  );
  if (!match) throw new Error(`${name} has no recipe sequence`);
  return Number(match[1]);
}

/** The last segment of a path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its state visible, for "has not settled yet" assertions. */
export function track<T>(promise: Promise<T>): {
  readonly promise: Promise<T>;
  readonly settled: () => boolean;
  readonly settledAt: () => number | undefined;
} {
  let at: number | undefined;
  const observed = promise.finally(() => {
    at = performance.now();
  });
  observed.catch(() => {});
  return { promise: observed, settled: () => at !== undefined, settledAt: () => at };
}

/** Waits until `path` has exactly `count` children (a queued acquire has created its node). */
export async function untilChildren(
  client: ZkClient,
  path: string,
  count: number,
  timeoutMs = 15_000,
): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const names = await childrenOf(client, path);
    if (names.length === count) return names;
    if (performance.now() > deadline) {
      throw new Error(`${path} has ${names.length} children, not ${count}: ${names.join(', ')}`);
    }
    await sleep(10);
  }
}

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32), so a failing run replays. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
