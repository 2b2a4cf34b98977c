/**
 * Facts about ZooKeeper that the READMEs state, checked against the real server (Debian's 3.8)
 * rather than taken from memory: how sequence numbers and the parent's cversion move.
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let client: ZkClient;
beforeAll(async () => {
  client = createClient({ connect: (await testZooKeeper()).connectString });
  await client.connected();
});
afterAll(() => client?.close());

describe('the sequence counter of a parent', () => {
  it('counts child creates only (sequential or not); the cversion clients read counts creates and deletes', async () => {
    const parent = uniqueRoot('sequence');
    await client.promises.create(parent);
    const steps: { step: string; name?: string; cversion: number }[] = [];
    const cversion = async () => (await client.promises.exists(parent))?.cversion ?? Number.NaN;
    const createSequential = async () => {
      const { path } = await client.promises.create(`${parent}/n-`, null, { sequential: true });
      const name = path.slice(parent.length + 1);
      steps.push({ step: 'create sequential', name, cversion: await cversion() });
      return path;
    };
    const remove = async (path: string) => {
      await client.promises.delete(path);
      steps.push({ step: 'delete', cversion: await cversion() });
    };

    await remove(await createSequential());
    const second = await createSequential();
    const { path: plain } = await client.promises.create(`${parent}/plain`);
    steps.push({ step: 'create plain', cversion: await cversion() });
    await remove(plain);
    const fourth = await createSequential();
    await remove(second);
    await remove(fourth);
    await createSequential().then(remove);

    // The suffix is the number of children created before (the plain create took number 2);
    // the Stat's cversion is 2 × creates − children present = creates + deletes.
    expect(steps).toEqual([
      { step: 'create sequential', name: 'n-0000000000', cversion: 1 },
      { step: 'delete', cversion: 2 },
      { step: 'create sequential', name: 'n-0000000001', cversion: 3 },
      { step: 'create plain', cversion: 4 },
      { step: 'delete', cversion: 5 },
      { step: 'create sequential', name: 'n-0000000003', cversion: 6 },
      { step: 'delete', cversion: 7 },
      { step: 'delete', cversion: 8 },
      { step: 'create sequential', name: 'n-0000000004', cversion: 9 },
      { step: 'delete', cversion: 10 },
    ]);
    await client.promises.delete(parent);
  });

  it('moves for an ephemeral child removed by its session ending, as for any create', async () => {
    const parent = uniqueRoot('sequence');
    await client.promises.create(parent);
    const other = createClient({ connect: (await testZooKeeper()).connectString });
    const first = await other.promises.create(`${parent}/n-`, null, {
      sequential: true,
      mode: 'ephemeral',
    });
    await other.close(); // the session's close removes the ephemeral node
    expect(await client.promises.children(parent)).toEqual([]);
    const next = await client.promises.create(`${parent}/n-`, null, { sequential: true });
    expect([first.path, next.path].map((path) => path.slice(parent.length + 1))).toEqual([
      'n-0000000000',
      'n-0000000001',
    ]);
    expect((await client.promises.exists(parent))?.cversion).toBe(3);
    await client.promises.delete(next.path);
    await client.promises.delete(parent);
  });
});
