/**
 * The operations of ZooKeeper 3.5–3.9 beyond the classic ones, against a real server: children
 * with their parent's Stat, getAllChildrenNumber, getEphemerals, whoAmI, getConfig, and the
 * paths a chrooted client sees. The native transport lacks most: they answer Unimplemented.
 */
import { testZooKeeper } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  record,
  rejectionOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { op } from '../index';

describe('childrenWithStat and getConfig (both transports)', () => {
  it('lists the children sorted with the parent’s Stat, in one call', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    for (const name of ['b', 'a', 'c']) await client.promises.create(`${root}/${name}`);
    const listing = await client.promises.childrenWithStat(root);
    expect(listing.children).toEqual(['a', 'b', 'c']);
    expect(listing.stat.numChildren).toBe(3);
    expect(listing.stat).toEqual(await client.promises.exists(root));
    expect((await firstValueFrom(client.childrenWithStat(root))).children).toEqual(['a', 'b', 'c']);
    expect((await rejectionOf(client.promises.childrenWithStat(`${root}/none`))).code).toBe(
      'NoNode',
    );
  });

  it('reads the ensemble configuration node', async () => {
    const client = await connectedClient();
    const config = await client.promises.getConfig();
    expect(Buffer.isBuffer(config.data)).toBe(true);
    expect(config.stat.czxid).toBeGreaterThanOrEqual(0);
  });
});

describe.runIf(transportName === 'typescript')('ZooKeeper 3.6+ queries', () => {
  it('counts every node under a path, at every depth', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    await client.promises.mkdirp(`${root}/a/b/c`);
    await client.promises.create(`${root}/a/x`);
    await client.promises.create(`${root}/y`);
    expect(await client.promises.getAllChildrenNumber(root)).toBe(5);
    expect(await firstValueFrom(client.getAllChildrenNumber(`${root}/a`))).toBe(3);
    expect((await rejectionOf(client.promises.getAllChildrenNumber(`${root}/none`))).code).toBe(
      'NoNode',
    );
  });

  it('lists the session’s own ephemeral nodes, by path prefix', async () => {
    const client = await connectedClient();
    const other = await connectedClient();
    const root = await testRoot();
    await client.promises.create(`${root}/mine-1`, null, { mode: 'ephemeral' });
    await client.promises.create(`${root}/sub`);
    await client.promises.create(`${root}/sub/mine-2`, null, { mode: 'ephemeral' });
    await other.promises.create(`${root}/theirs`, null, { mode: 'ephemeral' });
    await client.promises.create(`${root}/persistent`);
    expect(await client.promises.getEphemerals(root)).toEqual([
      `${root}/mine-1`,
      `${root}/sub/mine-2`,
    ]);
    expect(await client.promises.getEphemerals(`${root}/sub`)).toEqual([`${root}/sub/mine-2`]);
    expect(await other.promises.getEphemerals(root)).toEqual([`${root}/theirs`]);
    expect(await client.promises.getEphemerals()).toEqual(
      expect.arrayContaining([`${root}/mine-1`, `${root}/sub/mine-2`]),
    );
  });

  it('asks the server who the session is (3.9+); an older server answers Unimplemented', async () => {
    const client = await connectedClient({
      auth: { scheme: 'digest', credentials: 'alice:secret' },
    });
    try {
      const infos = await client.promises.whoAmI();
      expect(infos).toEqual(expect.arrayContaining([{ authScheme: 'digest', user: 'alice' }]));
    } catch (error) {
      expect(error).toMatchObject({ code: 'Unimplemented' });
      expect((error as Error).message).toContain('older ZooKeeper');
    }
    // The connection survived the unknown op: the session still works.
    expect(await client.promises.exists('/')).not.toBeNull();
    expect(client.state).toBe('connected');
  });

  it('gives a chrooted client its own paths: results, ephemerals, transactions and events', async () => {
    const { connectString } = await testZooKeeper();
    const admin = await connectedClient();
    const root = await testRoot();
    const client = await connectedClient({ connect: `${connectString}${root}` });
    const created = await client.promises.create('/seq-', 'x', {
      sequential: true,
      mode: 'ephemeral',
    });
    expect(created.path).toMatch(/^\/seq-\d{10}$/);
    expect(await admin.promises.exists(`${root}${created.path}`)).not.toBeNull();
    expect(await client.promises.getEphemerals('/')).toEqual([created.path]);
    const [made] = await client.promises.multi([op.create('/tx-', 'y', { sequential: true })]);
    expect((made as { path: string }).path).toMatch(/^\/tx-\d{10}$/);
    expect(await client.promises.children('/')).toHaveLength(2);
    const tree = record(client.watchTree('/'));
    await waitFor(() => tree.values.length === 1);
    await admin.promises.create(`${root}/from-admin`, 'z');
    await waitFor(() => tree.values.length === 2);
    expect(tree.values[1]).toEqual({ type: 'created', path: '/from-admin' });
    const data = record(client.watchData('/from-admin'));
    await waitFor(() => data.values.length === 1);
    await admin.promises.set(`${root}/from-admin`, 'changed');
    await waitFor(() => data.values.length === 2);
    expect(data.values[1]?.data.toString()).toBe('changed');
  });
});

describe.runIf(transportName === 'native')('what the native transport lacks', () => {
  it('answers Unimplemented naming the default transport', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    for (const call of [
      () => client.promises.getAllChildrenNumber(root),
      () => client.promises.getEphemerals(root),
      () => client.promises.whoAmI(),
    ]) {
      const error = await rejectionOf(call());
      expect(error.code).toBe('Unimplemented');
      expect(error.message).toContain('default (TypeScript) transport');
    }
    expect(client.state).toBe('connected');
  });
});
