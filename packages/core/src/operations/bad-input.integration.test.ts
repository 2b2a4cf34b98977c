/**
 * Bad input through the real client, promise and observable APIs alike: a typed ZkError with
 * the right code, raised before anything reaches the server (nothing is created or changed).
 */
import { firstValueFrom, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  listTree,
  observableErrorOf,
  record,
  rejectionOf,
  statesOf,
  testRoot,
} from '../../test/support';
import { type CreateOptions, MAX_DATA_BYTES, type ZkClient, ZkError } from '../index';

/** Runs `promise` and `observable` forms of one call; both must fail the same way. */
async function bothFail(
  promise: () => Promise<unknown>,
  observable: () => Observable<unknown>,
): Promise<[ZkError, ZkError]> {
  const viaPromise = await rejectionOf(promise());
  const viaObservable = await observableErrorOf(observable());
  expect(viaObservable).toBeInstanceOf(ZkError);
  expect(viaObservable.code).toBe(viaPromise.code);
  return [viaPromise, viaObservable];
}

/** Every call that takes a path, in both forms. */
function pathCalls(client: ZkClient) {
  const acl = [{ permissions: 31, scheme: 'world', id: 'anyone' }];
  return {
    create: [
      (path: string) => client.promises.create(path, 'x', { parents: 'persistent' }),
      (path: string) => client.create(path, 'x', { parents: 'persistent' }),
    ],
    get: [(path: string) => client.promises.get(path), (path: string) => client.get(path)],
    set: [
      (path: string) => client.promises.set(path, 'x'),
      (path: string) => client.set(path, 'x'),
    ],
    delete: [(path: string) => client.promises.delete(path), (path: string) => client.delete(path)],
    exists: [(path: string) => client.promises.exists(path), (path: string) => client.exists(path)],
    children: [
      (path: string) => client.promises.children(path),
      (path: string) => client.children(path),
    ],
    mkdirp: [(path: string) => client.promises.mkdirp(path), (path: string) => client.mkdirp(path)],
    sync: [(path: string) => client.promises.sync(path), (path: string) => client.sync(path)],
    getAcl: [(path: string) => client.promises.getAcl(path), (path: string) => client.getAcl(path)],
    setAcl: [
      (path: string) => client.promises.setAcl(path, acl),
      (path: string) => client.setAcl(path, acl),
    ],
    watchData: [
      (path: string) => firstValueFrom(client.watchData(path)),
      (path: string) => client.watchData(path),
    ],
    watchChildren: [
      (path: string) => firstValueFrom(client.watchChildren(path)),
      (path: string) => client.watchChildren(path),
    ],
    watchExists: [
      (path: string) => firstValueFrom(client.watchExists(path)),
      (path: string) => client.watchExists(path),
    ],
  } as const satisfies Record<
    string,
    readonly [(path: string) => Promise<unknown>, (path: string) => Observable<unknown>]
  >;
}

describe('bad paths', () => {
  it('refuses every path rule with InvalidPath, in every call, creating nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    await client.promises.create(`${root}/a`, 'original');
    const session = record(client.session$);
    const before = await listTree(client, root);
    const badPaths: Array<[string, string]> = [
      ['', 'must not be empty'],
      ['relative/path', 'must start with "/"'],
      [`${root.slice(1)}/a`, 'must start with "/"'],
      [`${root}/a/`, 'must not end with "/"'],
      [`${root}//a`, 'empty segment'],
      [`${root}/a//b`, 'empty segment'],
      [`${root}/./a`, 'relative segment "."'],
      [`${root}/a/.`, 'relative segment "."'],
      [`${root}/../a`, 'relative segment ".."'],
      [`${root}/a/..`, 'relative segment ".."'],
      [`${root}/a\u0000b`, 'forbidden character NUL'],
      [`${root}/a\nb`, 'forbidden character U+000A'],
      [`${root}/a\tb`, 'forbidden character U+0009'],
      [`${root}/a\u001fb`, 'forbidden character U+001F'],
      [`${root}/a\u007fb`, 'forbidden character U+007F'],
      [`${root}/a\u0085b`, 'forbidden character U+0085'],
      [`${root}/a\ud800b`, 'forbidden character U+D800'],
      [`${root}/a\uf8ffb`, 'forbidden character U+F8FF'],
      [`${root}/a\ufff0b`, 'forbidden character U+FFF0'],
    ];
    const calls = pathCalls(client);
    for (const [path, reason] of badPaths) {
      for (const [name, [promise, observable]] of Object.entries(calls)) {
        const [error] = await bothFail(
          () => promise(path),
          () => observable(path),
        );
        expect({ path, name, code: error.code }).toEqual({ path, name, code: 'InvalidPath' });
        expect(error.message).toContain(reason);
        expect(error.path).toBe(path);
      }
    }
    // The root itself cannot be created or deleted.
    expect((await rejectionOf(client.promises.create('/'))).code).toBe('InvalidPath');
    expect((await rejectionOf(client.promises.delete('/'))).code).toBe('InvalidPath');
    // Not a string at all.
    expect((await rejectionOf(client.promises.get(42 as never))).code).toBe('InvalidPath');
    // Nothing reached the server: nothing created or changed, the connection never dropped.
    expect(await listTree(client, root)).toEqual(before);
    expect((await client.promises.get(`${root}/a`)).data.toString()).toBe('original');
    expect(statesOf(session)).toEqual(['connected']);
  });
});

describe('bad data, versions, modes and ACLs', () => {
  it('refuses data over the limit with BadArguments, creating and changing nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await client.promises.create(path, 'original');
    for (const size of [MAX_DATA_BYTES + 1, 1024 * 1024, 2 * 1024 * 1024]) {
      const data = Buffer.alloc(size, 1);
      const [created] = await bothFail(
        () => client.promises.create(`${root}/big`, data),
        () => client.create(`${root}/big`, data),
      );
      expect(created.code).toBe('BadArguments');
      expect(created.path).toBe(`${root}/big`);
      const [written] = await bothFail(
        () => client.promises.set(path, data),
        () => client.set(path, data),
      );
      expect(written.code).toBe('BadArguments');
    }
    // Not text, bytes or nothing.
    const [wrongType] = await bothFail(
      () => client.promises.set(path, 42 as never),
      () => client.set(path, { toString: () => 'x' } as never),
    );
    expect(wrongType.code).toBe('BadArguments');
    expect(await listTree(client, root)).toEqual(['/node']);
    expect((await client.promises.get(path)).data.toString()).toBe('original');
  });

  it('refuses bad versions with BadArguments in set, delete and setAcl', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const path = `${root}/node`;
    await client.promises.create(path, 'original');
    const acl = [{ permissions: 1, scheme: 'world', id: 'anyone' }];
    for (const version of [-2, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '1', null]) {
      const bad = version as never;
      for (const [name, [promise, observable]] of Object.entries({
        set: [() => client.promises.set(path, 'x', bad), () => client.set(path, 'x', bad)],
        delete: [() => client.promises.delete(path, bad), () => client.delete(path, bad)],
        setAcl: [() => client.promises.setAcl(path, acl, bad), () => client.setAcl(path, acl, bad)],
      } as const)) {
        const [error] = await bothFail(promise, observable);
        expect({ name, version, code: error.code }).toEqual({
          name,
          version,
          code: 'BadArguments',
        });
        expect(error.message).toContain('version');
      }
    }
    const node = await client.promises.get(path);
    expect(node.data.toString()).toBe('original');
    expect(node.stat.version).toBe(0);
    expect(node.stat.aversion).toBe(0);
  });

  it('refuses bad create modes and options with BadArguments, creating nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const cases: Array<[string, CreateOptions, string]> = [
      ['container + sequential', { mode: 'container', sequential: true }, 'cannot be sequential'],
      ['TTL on an ephemeral node', { mode: 'ephemeral', ttlMs: 1_000 }, "needs mode 'persistent'"],
      ['TTL on a container', { mode: 'container', ttlMs: 1_000 }, "needs mode 'persistent'"],
      ['negative TTL', { ttlMs: -1 }, 'ttlMs must be a positive integer'],
      ['zero TTL', { ttlMs: 0 }, 'ttlMs must be a positive integer'],
      ['fractional TTL', { ttlMs: 1.5 }, 'ttlMs must be a positive integer'],
      ['huge TTL', { ttlMs: 2 ** 41 }, 'ttlMs must be a positive integer'],
      ['unknown mode', { mode: 'sticky' as never }, 'mode must be one of'],
      ['non-boolean sequential', { sequential: 'yes' as never }, 'sequential must be a boolean'],
      ['unknown parents', { parents: 'ephemeral' as never }, "parents must be 'persistent'"],
      ['empty ACL', { acl: [] }, 'non-empty array'],
      [
        'ACL permissions out of range',
        { acl: [{ permissions: 64, scheme: 'world', id: 'anyone' }] },
        'Invalid ACL entry',
      ],
      ['ACL without scheme', { acl: [{ permissions: 1, id: 'anyone' } as never] }, 'ACL entry'],
    ];
    for (const [name, options, reason] of cases) {
      const path = `${root}/x/node`;
      const [error] = await bothFail(
        () => client.promises.create(path, 'x', { parents: 'persistent', ...options }),
        () => client.create(path, 'x', { parents: 'persistent', ...options }),
      );
      expect({ name, code: error.code }).toEqual({ name, code: 'BadArguments' });
      expect(error.message).toContain(reason);
    }
    const [notObject] = await bothFail(
      () => client.promises.create(`${root}/y`, 'x', 'ephemeral' as never),
      () => client.create(`${root}/y`, 'x', 'ephemeral' as never),
    );
    expect(notObject.code).toBe('BadArguments');
    const [badMkdirp] = await bothFail(
      () => client.promises.mkdirp(`${root}/m/n`, { mode: 'ephemeral' as never }),
      () => client.mkdirp(`${root}/m/n`, { mode: 'ephemeral' as never }),
    );
    expect(badMkdirp.code).toBe('BadArguments');
    const [badSetAcl] = await bothFail(
      () => client.promises.setAcl(root, []),
      () => client.setAcl(root, []),
    );
    expect(badSetAcl.code).toBe('BadArguments');
    // Nothing was created, not even the parents.
    expect(await listTree(client, root)).toEqual([]);
  });
});
