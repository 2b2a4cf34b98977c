/**
 * Operations against a real ZooKeeper: every create mode, data round trips up to the server's
 * real limit, versions, reads, mkdirp, sync, ACLs, error codes, and retries across a lost connection.
 */
import { createHash } from 'node:crypto';
import { startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  connectedClient,
  createWithAcl,
  listTree,
  proxyTo,
  record,
  rejectionOf,
  sessionPrototype,
  sleep,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { MAX_DATA_BYTES, OPEN_ACL_UNSAFE, Permission, READ_ACL_UNSAFE, ZkError } from '../index';
import type { SessionHandle } from '../transport-spi';

const SEQUENCE = /^\d{10}$/;

describe('create', () => {
  it('creates a persistent node by default and returns its Stat', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const before = Date.now();
    const created = await client.promises.create(`${root}/plain`, 'hello');
    expect(created.path).toBe(`${root}/plain`);
    expect(created.stat).toMatchObject({
      version: 0,
      cversion: 0,
      aversion: 0,
      dataLength: 5,
      numChildren: 0,
      ephemeralOwner: '0',
    });
    expect(created.stat.czxid).toBeGreaterThan(0);
    expect(created.stat.mzxid).toBe(created.stat.czxid);
    expect(created.stat.ctime).toBeGreaterThanOrEqual(before - 5_000);
    expect(created.stat.ctime).toBeLessThanOrEqual(Date.now() + 5_000);
    // The Stat from create is the node's real one.
    expect(await client.promises.exists(created.path)).toEqual(created.stat);
    // Persistent: it outlives its session.
    await client.close();
    const other = await connectedClient();
    expect((await other.promises.get(created.path)).data.toString()).toBe('hello');
  });

  it('creates an ephemeral node owned by the session, gone when the session closes', async () => {
    const client = await connectedClient();
    const other = await connectedClient();
    const root = await testRoot();
    const created = await client.promises.create(`${root}/mine`, null, { mode: 'ephemeral' });
    expect(created.stat.ephemeralOwner).toBe(client.sessionId);
    expect((await other.promises.exists(created.path))?.ephemeralOwner).toBe(client.sessionId);
    await client.close();
    expect(await other.promises.exists(created.path)).toBeNull();
  });

  it('creates sequential nodes with ten-digit increasing suffixes, also under "parent/"', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const first = await client.promises.create(`${root}/job-`, 'a', { sequential: true });
    const second = await client.promises.create(`${root}/job-`, 'b', { sequential: true });
    const ephemeral = await client.promises.create(`${root}/lock-`, null, {
      mode: 'ephemeral',
      sequential: true,
    });
    const bare = await client.promises.create(`${root}/`, null, { sequential: true });
    const suffix = (path: string, prefix: string) => path.slice(`${root}/${prefix}`.length);
    expect(suffix(first.path, 'job-')).toMatch(SEQUENCE);
    expect(Number(suffix(second.path, 'job-'))).toBe(Number(suffix(first.path, 'job-')) + 1);
    expect(suffix(ephemeral.path, 'lock-')).toMatch(SEQUENCE);
    expect(ephemeral.stat.ephemeralOwner).toBe(client.sessionId);
    // The counter is the parent's cversion: shared by every sequential child.
    expect(suffix(bare.path, '')).toBe('0000000003');
    expect(await client.promises.children(root)).toEqual(
      ['job-0000000000', 'job-0000000001', 'lock-0000000002', '0000000003'].sort(),
    );
  });

  it('creates missing parents with parents: persistent', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const created = await client.promises.create(`${root}/a/b/c`, 'leaf', {
      parents: 'persistent',
    });
    expect(created.path).toBe(`${root}/a/b/c`);
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/c']);
    expect((await client.promises.get(`${root}/a`)).data.length).toBe(0);
    // Without parents, a missing parent is NoNode and nothing is created.
    const error = await rejectionOf(client.promises.create(`${root}/x/y`, 'leaf'));
    expect(error.code).toBe('NoNode');
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/c']);
  });

  it('creates a node with the given ACL', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    if (transportName === 'native') {
      // The stock binding always creates with the open ACL: refused, nothing created.
      const refused = await rejectionOf(
        client.promises.create(`${root}/read-only`, 'x', { acl: READ_ACL_UNSAFE }),
      );
      expect(refused.code).toBe('BadArguments');
      expect(refused.message).toContain('default (TypeScript) transport');
      expect(await client.promises.children(root)).toEqual([]);
      return;
    }
    const created = await client.promises.create(`${root}/read-only`, 'x', {
      acl: READ_ACL_UNSAFE,
    });
    expect(created.stat.aversion).toBe(0);
    expect((await client.promises.getAcl(created.path)).acl).toEqual(READ_ACL_UNSAFE);
    expect((await rejectionOf(client.promises.set(created.path, 'y'))).code).toBe('NoAuth');
  });

  it('fails a TTL node with Unimplemented on a server without extendedTypesEnabled', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const error = await rejectionOf(client.promises.create(`${root}/ttl`, 'x', { ttlMs: 1_000 }));
    expect(error.code).toBe('Unimplemented');
    expect(error.path).toBe(`${root}/ttl`);
    expect(await client.promises.children(root)).toEqual([]);
  });
});

describe('container and TTL nodes (a server with extendedTypesEnabled and a fast reaper)', () => {
  let server: ZooKeeperServer;

  beforeAll(async () => {
    server = await startZooKeeper({
      jvmOptions: [
        '-Xms64m',
        '-Xmx256m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-XX:-UsePerfData',
        '-Dzookeeper.extendedTypesEnabled=true',
        '-Dznode.container.checkIntervalMs=200',
      ],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('creates a container node that the server deletes once its last child is gone', async () => {
    const client = await connectedClient({ connect: server.connectString });
    const root = await testRoot(server.connectString);
    const container = await client.promises.create(`${root}/box`, 'x', { mode: 'container' });
    const never = await client.promises.create(`${root}/never-used`, null, { mode: 'container' });
    const child = await client.promises.create(`${container.path}/item`, 'y');
    await sleep(600);
    // A container with a child stays, and so does one that never had any.
    expect(await client.promises.exists(container.path)).not.toBeNull();
    await client.promises.delete(child.path);
    await waitFor(async () => (await client.promises.exists(container.path)) === null);
    expect(await client.promises.exists(never.path)).not.toBeNull();
  });

  it('creates missing parents as containers with parents: container', async () => {
    const client = await connectedClient({ connect: server.connectString });
    const root = await testRoot(server.connectString);
    const leaf = await client.promises.create(`${root}/a/b/leaf`, 'x', { parents: 'container' });
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/leaf']);
    await client.promises.delete(leaf.path);
    // b goes once empty, then a once b is gone.
    await waitFor(async () => (await client.promises.children(root)).length === 0);
  });

  it('creates TTL nodes (plain and sequential) that the server deletes once expired', async () => {
    const client = await connectedClient({ connect: server.connectString });
    const root = await testRoot(server.connectString);
    const plain = await client.promises.create(`${root}/ttl`, 'x', { ttlMs: 300 });
    const sequential = await client.promises.create(`${root}/ttl-`, 'y', {
      ttlMs: 300,
      sequential: true,
    });
    const kept = await client.promises.create(`${root}/ttl-long`, 'z', { ttlMs: 60_000 });
    expect(plain.stat.dataLength).toBe(1);
    expect(sequential.path.slice(`${root}/ttl-`.length)).toMatch(SEQUENCE);
    await waitFor(async () => (await client.promises.children(root)).length === 1);
    expect(await client.promises.children(root)).toEqual(['ttl-long']);
    expect(await client.promises.exists(kept.path)).not.toBeNull();
  });
});

describe('data', () => {
  it('round-trips text, bytes and empty data', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const text = 'héllo, wörld ✓ 🚀';
    await client.promises.create(`${root}/text`, text);
    expect((await client.promises.get(`${root}/text`)).data.toString('utf8')).toBe(text);

    const bytes = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
    await client.promises.create(`${root}/bytes`, bytes);
    expect((await client.promises.get(`${root}/bytes`)).data.equals(bytes)).toBe(true);

    // A Uint8Array view into a larger buffer: only the view's bytes are written.
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    await client.promises.set(`${root}/bytes`, backing.subarray(2, 5));
    expect([...(await client.promises.get(`${root}/bytes`)).data]).toEqual([1, 2, 3]);

    for (const [name, empty] of [
      ['null', null],
      ['undefined', undefined],
      ['string', ''],
      ['buffer', Buffer.alloc(0)],
    ] as const) {
      const created = await client.promises.create(`${root}/empty-${name}`, empty);
      expect(created.stat.dataLength).toBe(0);
      const read = await client.promises.get(created.path);
      expect(Buffer.isBuffer(read.data)).toBe(true);
      expect(read.data.length).toBe(0);
    }
    // The observable twins agree.
    const viaObservable = await firstValueFrom(client.get(`${root}/text`));
    expect(viaObservable.data.toString()).toBe(text);
  });

  it('writes and reads data up to the server limit; one byte more fails before sending', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const session = record(client.session$);
    const path = `${root}/big`;
    // jute.maxbuffer (0xfffff) bounds the whole request: header, path and data.
    const largestCreate = MAX_DATA_BYTES - 47 - Buffer.byteLength(path);
    const largestSet = MAX_DATA_BYTES - 20 - Buffer.byteLength(path);
    const created = await client.promises.create(path, Buffer.alloc(largestCreate, 7));
    expect(created.stat.dataLength).toBe(largestCreate);
    const big = Buffer.alloc(largestSet, 3);
    big[largestSet - 1] = 42;
    const stat = await client.promises.set(path, big);
    expect(stat.dataLength).toBe(largestSet);
    expect((await client.promises.get(path)).data.equals(big)).toBe(true);

    const tooBig = await rejectionOf(client.promises.set(path, Buffer.alloc(largestSet + 1)));
    expect(tooBig.code).toBe('BadArguments');
    expect(tooBig.message).toContain('jute.maxbuffer');
    const tooBigCreate = await rejectionOf(
      client.promises.create(`${root}/big2`, Buffer.alloc(largestCreate + 1)),
    );
    expect(tooBigCreate.code).toBe('BadArguments');
    const oneMiB = await rejectionOf(client.promises.set(path, Buffer.alloc(1024 * 1024)));
    expect(oneMiB.code).toBe('BadArguments');
    // Refused before sending: the connection never dropped and nothing changed.
    expect(statesOf(session)).toEqual(['connected']);
    expect((await client.promises.get(path)).data.equals(big)).toBe(true);
    expect(await client.promises.children(root)).toEqual(['big']);
  });
});

describe('versions', () => {
  it('sets with an expected version, and fails with BadVersion on a stale one', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/v`;
    await client.promises.create(path, 'v0');
    const first = await client.promises.set(path, 'v1', 0);
    expect(first.version).toBe(1);
    const stale = await rejectionOf(client.promises.set(path, 'stale', 0));
    expect(stale).toMatchObject({ code: 'BadVersion', path, rc: -103 });
    expect(stale.isRetryable).toBe(false);
    expect((await client.promises.get(path)).data.toString()).toBe('v1');
    // -1 (and no version) writes whatever the version.
    expect((await client.promises.set(path, 'v2', -1)).version).toBe(2);
    expect((await client.promises.set(path, 'v3')).version).toBe(3);
    const viaObservable = await firstValueFrom(client.set(path, 'v4', 3));
    expect(viaObservable.version).toBe(4);
  });

  it('deletes with an expected version, and fails with BadVersion on a stale one', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/d`;
    await client.promises.create(path, 'x');
    await client.promises.set(path, 'y');
    expect((await rejectionOf(client.promises.delete(path, 0))).code).toBe('BadVersion');
    expect(await client.promises.exists(path)).not.toBeNull();
    await client.promises.delete(path, 1);
    expect(await client.promises.exists(path)).toBeNull();
    expect((await rejectionOf(client.promises.delete(path))).code).toBe('NoNode');
  });
});

describe('reads, mkdirp and sync', () => {
  it('mkdirp walks again when a parent vanishes under it, as a reaped container does', async () => {
    const client = await connectedClient();
    const other = await connectedClient();
    const root = await testRoot();
    await client.promises.mkdirp(`${root}/a`);
    const prototype = sessionPrototype();
    const call = prototype.call;
    let removed = false;
    const creates = vi.spyOn(prototype, 'call').mockImplementation(function (
      this: SessionHandle,
      ...args: Parameters<typeof call>
    ) {
      const [operation, request] = args;
      if (
        !removed &&
        operation === 'create' &&
        (request as { path: string }).path === `${root}/a/b`
      ) {
        removed = true;
        // The parent goes between the walk's exists and its create.
        void other.promises.delete(`${root}/a`).then(() => call.apply(this, args));
        return;
      }
      call.apply(this, args);
    });
    try {
      await client.promises.mkdirp(`${root}/a/b/c`);
    } finally {
      creates.mockRestore();
    }
    expect(removed).toBe(true);
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/c']);
  });

  it('reports null for an absent node from exists', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    expect(await client.promises.exists(`${root}/nothing`)).toBeNull();
    expect(await firstValueFrom(client.exists(`${root}/nothing`))).toBeNull();
    expect((await client.promises.exists(root))?.numChildren).toBe(0);
  });

  it('lists children sorted', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const names = ['b', '10', 'a', '9', 'B', 'z-1', 'z-0'];
    for (const name of names) await client.promises.create(`${root}/${name}`);
    const sorted = ['10', '9', 'B', 'a', 'b', 'z-0', 'z-1'];
    expect(await client.promises.children(root)).toEqual(sorted);
    expect(await firstValueFrom(client.children(root))).toEqual(sorted);
    expect(await client.promises.children(`${root}/a`)).toEqual([]);
    expect((await rejectionOf(client.promises.children(`${root}/none`))).code).toBe('NoNode');
  });

  it('mkdirp creates every missing node, idempotently and concurrently', async () => {
    const client = await connectedClient();
    const other = await connectedClient();
    const root = await testRoot();
    await client.promises.mkdirp(`${root}/a/b/c`);
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/c']);
    const stat = await client.promises.exists(`${root}/a/b/c`);
    // Again: nothing changes.
    await client.promises.mkdirp(`${root}/a/b/c`);
    await firstValueFrom(client.mkdirp(`${root}/a/b`));
    expect(await client.promises.exists(`${root}/a/b/c`)).toEqual(stat);
    // Two clients racing for the same new branch both succeed.
    await Promise.all([
      client.promises.mkdirp(`${root}/x/y/z`),
      other.promises.mkdirp(`${root}/x/y/z`),
      client.promises.mkdirp(`${root}/x/y/z`),
    ]);
    expect(await listTree(client, root)).toEqual(['/a', '/a/b', '/a/b/c', '/x', '/x/y', '/x/y/z']);
    await client.promises.mkdirp('/');
  });

  it('sync resolves, after which another client’s write is visible', async () => {
    const writer = await connectedClient();
    const reader = await connectedClient();
    const root = await testRoot();
    await writer.promises.set(root, 'written');
    await reader.promises.sync(root);
    await firstValueFrom(reader.sync(root));
    expect((await reader.promises.get(root)).data.toString()).toBe('written');
  });
});

describe('ACLs', () => {
  it('reads and sets ACLs; a READ-only ACL makes writes fail with NoAuth', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/guarded`;
    await client.promises.create(path, 'x');
    const initial = await client.promises.getAcl(path);
    expect(initial.acl).toEqual(OPEN_ACL_UNSAFE);
    expect(initial.stat.aversion).toBe(0);
    expect((await rejectionOf(client.promises.setAcl(path, READ_ACL_UNSAFE, 3))).code).toBe(
      'BadVersion',
    );
    await client.promises.setAcl(path, READ_ACL_UNSAFE, 0);
    const after = await client.promises.getAcl(path);
    expect(after.acl).toEqual(READ_ACL_UNSAFE);
    expect(after.stat.aversion).toBe(1);
    expect((await firstValueFrom(client.getAcl(path))).acl).toEqual(READ_ACL_UNSAFE);
    // Reading is allowed; writing, creating children and changing the ACL are not.
    expect((await client.promises.get(path)).data.toString()).toBe('x');
    const noAuth = await rejectionOf(client.promises.set(path, 'y'));
    expect(noAuth).toMatchObject({ code: 'NoAuth', path, rc: -102 });
    expect((await rejectionOf(client.promises.create(`${path}/child`))).code).toBe('NoAuth');
    expect((await rejectionOf(client.promises.setAcl(path, OPEN_ACL_UNSAFE))).code).toBe('NoAuth');
    // Deleting it is governed by the parent's ACL (open).
    await client.promises.delete(path);
  });

  it('fails getAcl with NoNode or NoAuth (the binding used to crash on either)', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const missing = await rejectionOf(client.promises.getAcl(`${root}/missing`));
    expect(missing).toMatchObject({ code: 'NoNode', path: `${root}/missing` });
    await createWithAcl(client, `${root}/write-only`, 'x', [
      { permissions: Permission.Write, scheme: 'world', id: 'anyone' },
    ]);
    const noAuth = await rejectionOf(firstValueFrom(client.getAcl(`${root}/write-only`)));
    expect(noAuth.code).toBe('NoAuth');
    // The process is still alive and the client still works.
    expect((await client.promises.getAcl(root)).acl).toEqual(OPEN_ACL_UNSAFE);
  });

  it('guards a node with a digest ACL that only an authenticated client passes', async () => {
    const digest = createHash('sha1').update('alice:secret').digest('base64');
    const acl = [{ permissions: Permission.All, scheme: 'digest', id: `alice:${digest}` }];
    const alice = await connectedClient({
      auth: { scheme: 'digest', credentials: 'alice:secret' },
    });
    const stranger = await connectedClient();
    const root = await testRoot();
    const path = `${root}/alice`;
    await createWithAcl(alice, path, 'private', acl);
    expect((await alice.promises.get(path)).data.toString()).toBe('private');
    expect((await alice.promises.getAcl(path)).acl).toEqual(acl);
    expect((await rejectionOf(stranger.promises.get(path))).code).toBe('NoAuth');
    expect((await rejectionOf(stranger.promises.set(path, 'mine'))).code).toBe('NoAuth');
  });
});

describe('credentials across connections', () => {
  it('sends the auth credentials again on every connection: the ACL still passes after a reconnect', async () => {
    const digest = createHash('sha1').update('bob:secret').digest('base64');
    const acl = [{ permissions: Permission.All, scheme: 'digest', id: `bob:${digest}` }];
    const proxy = await proxyTo();
    const bob = await connectedClient({
      connect: proxy.connectString,
      auth: { scheme: 'digest', credentials: 'bob:secret' },
    });
    const root = await testRoot();
    const path = `${root}/bob`;
    await createWithAcl(bob, path, 'private', acl);
    const session = record(bob.session$);
    proxy.cut();
    await waitFor(() => bob.state === 'reconnected');
    expect(statesOf(session)).toEqual(['connected', 'suspended', 'reconnected']);
    expect((await bob.promises.get(path)).data.toString()).toBe('private');
    await bob.promises.set(path, 'still mine');
  });
});

describe('error codes', () => {
  it('fails with typed ZkErrors: NoNode, NodeExists, NotEmpty, NoChildrenForEphemerals', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const noNode = await rejectionOf(client.promises.get(`${root}/missing`));
    expect(noNode).toBeInstanceOf(ZkError);
    expect(noNode).toMatchObject({ code: 'NoNode', path: `${root}/missing`, rc: -101 });
    expect(noNode.isRetryable).toBe(false);
    expect(noNode.message).toBe(`get ${root}/missing: NoNode (rc -101)`);

    await client.promises.create(`${root}/p`);
    const exists = await rejectionOf(client.promises.create(`${root}/p`));
    expect(exists).toMatchObject({ code: 'NodeExists', path: `${root}/p`, rc: -110 });

    await client.promises.create(`${root}/p/child`);
    const notEmpty = await rejectionOf(client.promises.delete(`${root}/p`));
    expect(notEmpty).toMatchObject({ code: 'NotEmpty', path: `${root}/p`, rc: -111 });

    await client.promises.create(`${root}/eph`, null, { mode: 'ephemeral' });
    const noChildren = await rejectionOf(client.promises.create(`${root}/eph/child`));
    expect(noChildren).toMatchObject({ code: 'NoChildrenForEphemerals', rc: -108 });

    // Through the observable API too.
    const viaObservable = await rejectionOf(firstValueFrom(client.get(`${root}/missing`)));
    expect(viaObservable.code).toBe('NoNode');
    expect(await listTree(client, root)).toEqual(['/eph', '/p', '/p/child']);
  });
});

describe('across a lost connection', () => {
  it('retries idempotent calls after the connection drops, and they succeed', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const root = await testRoot();
    await client.promises.create(`${root}/n`, 'before');
    await client.promises.create(`${root}/w`, 'before');
    await client.promises.create(`${root}/list/b`, null, { parents: 'persistent' });
    await client.promises.create(`${root}/list/a`);
    await client.promises.create(`${root}/gone`);
    const session = record(client.session$);
    const gets = vi.spyOn(sessionPrototype(), 'call');
    try {
      // Requests are held by the paused proxy, then the connection is cut under them.
      proxy.pause();
      const calls = Promise.all([
        client.promises.get(`${root}/n`),
        client.promises.exists(`${root}/n`),
        client.promises.children(`${root}/list`),
        client.promises.set(`${root}/w`, 'after'),
        client.promises.sync(root),
        client.promises.getAcl(`${root}/n`),
        client.promises.delete(`${root}/gone`),
        client.promises.mkdirp(`${root}/made/deep`),
      ]);
      await sleep(100);
      proxy.cut();
      await sleep(100);
      proxy.resume();
      const [got, stat, children, setStat, , acl] = await calls;
      expect(got.data.toString()).toBe('before');
      expect(stat?.version).toBe(0);
      expect(children).toEqual(['a', 'b']);
      expect(setStat.version).toBe(1);
      expect(acl.acl).toEqual(OPEN_ACL_UNSAFE);
      // The held get was sent again on the same session.
      expect(
        gets.mock.calls.filter(
          ([operation, request]) =>
            operation === 'get' && (request as { path: string }).path === `${root}/n`,
        ).length,
      ).toBeGreaterThanOrEqual(2);
    } finally {
      gets.mockRestore();
    }
    expect(statesOf(session)).toEqual(['connected', 'suspended', 'reconnected']);
    expect((await client.promises.get(`${root}/w`)).data.toString()).toBe('after');
    expect(await listTree(client, root)).toEqual([
      '/list',
      '/list/a',
      '/list/b',
      '/made',
      '/made/deep',
      '/n',
      '/w',
    ]);
  });

  it('fails a create during a connection loss with ConnectionLoss and does not retry it', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const root = await testRoot();
    await client.promises.create(`${root}/versioned`, 'v0');
    const calls = vi.spyOn(sessionPrototype(), 'call');
    const creates = () => calls.mock.calls.filter(([operation]) => operation === 'create');
    try {
      proxy.pause();
      const create = client.promises.create(`${root}/new`, 'x');
      const createSequential = client.promises.create(`${root}/seq-`, 'x', { sequential: true });
      const versionedSet = client.promises.set(`${root}/versioned`, 'v1', 0);
      await sleep(100);
      proxy.cut();
      const lost = await rejectionOf(create);
      expect(lost.code).toBe('ConnectionLoss');
      expect(lost.isRetryable).toBe(true);
      expect((await rejectionOf(createSequential)).code).toBe('ConnectionLoss');
      expect((await rejectionOf(versionedSet)).code).toBe('ConnectionLoss');
      proxy.resume();
      await waitFor(() => client.state === 'reconnected');
      await sleep(200);
      expect(creates()).toHaveLength(2);
    } finally {
      calls.mockRestore();
    }
    // The held requests never reached the server, and nothing sent them again.
    expect(await listTree(client, root)).toEqual(['/versioned']);
    expect((await client.promises.get(`${root}/versioned`)).stat.version).toBe(0);
  });
});
