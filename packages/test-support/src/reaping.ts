/**
 * A ZooKeeper that reaps idle containers at once, and gates on what the server sees: a path gone,
 * a node watched. For tests of an idle lock path deleted and made again between two uses.
 */
import type { ZkClient, ZkClientOptions } from '@zkrx/core';
import { fourLetterWord, startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { afterAll } from 'vitest';
import { connectedClient } from './clients';

let reaping: Promise<ZooKeeperServer> | undefined;

afterAll(async () => {
  const server = reaping;
  reaping = undefined;
  await (await server)?.close();
});

/**
 * This test file's own ZooKeeper, deleting empty containers every 100 ms (production: every
 * minute): an idle lock path disappears between two uses, and its sequence numbers restart.
 * Started on first use, stopped after the file.
 */
export function reapingZooKeeper(): Promise<ZooKeeperServer> {
  reaping ??= startZooKeeper({ containerCheckIntervalMs: 100 });
  return reaping;
}

/** `count` connected clients (each its own session) on the reaping ZooKeeper. */
export async function reapingClients(
  count: number,
  options: Partial<ZkClientOptions> = {},
): Promise<ZkClient[]> {
  const { connectString } = await reapingZooKeeper();
  return Promise.all(
    Array.from({ length: count }, () => connectedClient({ ...options, connect: connectString })),
  );
}

/** Resolves once `path` does not exist (a watch, not a poll). */
export function untilGone(client: ZkClient, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const subscription = client.watchExists(path).subscribe({
      next: (stat) => {
        if (stat !== null) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      },
      error: reject,
    });
  });
}

/**
 * Resolves once `path` has no children (or does not exist): releases finish in the background,
 * so another session sees a released node go a round trip later. A watch, not a poll.
 */
export function untilEmpty(client: ZkClient, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const subscription = client.watchChildren(path).subscribe({
      next: (names) => {
        if (names.length > 0) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve();
      },
      error: reject,
    });
  });
}

/** The sessions (hex, `0x` stripped) that the server says watch `path` (four-letter word `wchp`). */
export async function watchersOf(server: { connectString: string }, path: string) {
  const answer = await fourLetterWord(server.connectString, 'wchp');
  const sessions: string[] = [];
  let current: string | undefined;
  for (const line of answer.split('\n')) {
    if (line.startsWith('/')) current = line.trim();
    else if (current === path && line.trim().startsWith('0x')) sessions.push(line.trim().slice(2));
  }
  return sessions;
}

/**
 * Resolves once the server reports a watch by `client`'s session on `node` (a waiter waits on
 * the node before it), or once `settled` settles — whichever comes first. Asks the server every
 * 20 ms: a gate on what the server knows, not a guess at how long the client takes.
 */
export async function untilWatching(
  server: { connectString: string },
  client: ZkClient,
  node: string,
  settled?: Promise<unknown>,
): Promise<void> {
  let done = false;
  settled?.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (;;) {
    if (done) return;
    // Read each time: a client between two sessions has none yet.
    const session = client.sessionId?.replace(/^0x/, '');
    const watchers = await watchersOf(server, node);
    if (
      session !== undefined &&
      watchers.some((id) => id.replace(/^0+/, '') === session.replace(/^0+/, ''))
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
