/**
 * `zkrx locks <path>` and `zkrx leaders <path>`, printed once: a table, or JSON.
 */
import type { ZkClient } from '@zkrx/core';
import { inspectTree } from '@zkrx/lock';
import type { Paint } from './format';
import type { CliIo } from './io';
import { type ListCommand, listed, renderLocks } from './render';

/** What a listing found nothing of, in words. */
export function nothingFound(command: ListCommand, root: string): string {
  return `No ${command === 'locks' ? 'locks' : 'elections'} under ${root}.`;
}

/** Prints the locks (or elections) under `root`; resolves the exit code. */
export async function list(
  client: ZkClient,
  root: string,
  options: { command: ListCommand; json: boolean; paint: Paint; io: CliIo },
): Promise<number> {
  const { command, io } = options;
  const locks = listed(command, await inspectTree(client, root));
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ path: root, locks }, null, 2)}\n`);
    return 0;
  }
  const lines = renderLocks(locks, { command, now: Date.now(), paint: options.paint });
  if (lines.length === 0) {
    const exists = await client.promises.exists(root);
    io.stdout.write(`${nothingFound(command, root)}${exists ? '' : ` (${root} does not exist)`}\n`);
    return 0;
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
