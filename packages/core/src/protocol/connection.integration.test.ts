/**
 * The connection's reads against a real server: what a reply gave the caller stays intact after
 * later reads (the TypeScript transport reads into one buffer shared by every connection, so
 * any value still pointing into it would be overwritten), and a deep pipeline — whose reads
 * pause briefly between batches — gets every reply, in order, also when the connection drops
 * during a pause.
 */
import { describe, expect, it } from 'vitest';
import { connectedClient, proxyTo, testRoot, waitFor } from '../../test/support';
import { isZkError, joinPath, ZkErrorCode } from '../index';

/** Distinct data per node, of sizes from empty to several reads long. */
function dataOf(index: number): Buffer {
  const sizes = [0, 1, 100, 1_000, 5_000, 70_000];
  const size = sizes[index % sizes.length] as number;
  return Buffer.alloc(size, index % 251);
}

describe('replies read into the shared buffer', () => {
  it('keep their values after the reads that follow them', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const paths = Array.from({ length: 300 }, (_, index) => joinPath(root, `n${index}`));
    await Promise.all(paths.map((path, index) => client.promises.create(path, dataOf(index))));

    const first = await Promise.all(paths.map((path) => client.promises.get(path)));
    const names = await client.promises.children(root);
    // Later reads overwrite the shared buffer many times over.
    const again = await Promise.all(paths.map((path) => client.promises.get(path)));
    await Promise.all(paths.map((path) => client.promises.exists(path)));

    for (const [index, node] of first.entries()) {
      expect(node.data.equals(dataOf(index)), `node ${index}`).toBe(true);
      expect(node.stat.dataLength).toBe(dataOf(index).length);
      expect(again[index]?.data.equals(node.data)).toBe(true);
    }
    expect(names.sort()).toEqual(paths.map((path) => path.slice(root.length + 1)).sort());
  });
});

describe('a deep pipeline', () => {
  it('gets every reply, in the order of its requests', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = joinPath(root, 'node');
    await client.promises.create(path, 'value');
    const order: number[] = [];
    const values = await Promise.all(
      Array.from({ length: 1_000 }, (_, index) =>
        client.promises.get(path).then((node) => {
          order.push(index);
          return node.data.toString();
        }),
      ),
    );
    expect(values).toEqual(Array.from({ length: 1_000 }, () => 'value'));
    expect(order).toEqual(Array.from({ length: 1_000 }, (_, index) => index));
  });

  it('settles every request when the connection drops during a pause, then goes on', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const root = await testRoot();
    const path = joinPath(root, 'node');
    await client.promises.create(path, 'value');
    const calls = Array.from({ length: 500 }, () => client.promises.get(path));
    // Cut as the first reply arrives: the rest of the pipeline is in flight, reads paused.
    await calls[0];
    proxy.cut();
    const outcomes = await Promise.allSettled(calls);
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') expect(outcome.value.data.toString()).toBe('value');
      else expect(isZkError(outcome.reason, ZkErrorCode.ConnectionLoss)).toBe(true);
    }
    await waitFor(async () => {
      try {
        return (await client.promises.get(path)).data.toString() === 'value';
      } catch {
        return false;
      }
    });
  });
});
