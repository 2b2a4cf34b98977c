/**
 * Every `zkrx` command run in-process (`run`) against a real ZooKeeper: what it prints, its exit
 * code, what it leaves in ZooKeeper. (The same in a real terminal: terminal.integration.test.ts.)
 */
import type { ZkClient } from '@zkrx/core';
import { acquire, requestRevoke } from '@zkrx/lock';
import { protectedName } from '@zkrx/lock/recipe';
import { connectedClients } from '@zkrx/test-support';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { fakeIo } from '../test/fake-io';
import { run } from './index';

async function zkrx(argv: string[], io = fakeIo()) {
  const { connectString } = await testZooKeeper();
  const code = await run([...argv, '--connect', connectString], io);
  return { code, out: io.out(), err: io.err() };
}

/** `client` waits on `path` with `data` until the test ends (its client closes). */
async function waitOn(client: ZkClient, path: string, data: string): Promise<string> {
  let node: string | undefined;
  acquire(client, path, { data, onQueued: (queued) => (node = queued) }).catch(() => {});
  await vi.waitUntil(() => node !== undefined);
  return node as string;
}

describe('zkrx commands', () => {
  it('locks: each lock, its holder then its waiters; --json the same as data', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const root = uniqueRoot('cli');
    const lease = await acquire(a, `${root}/orders`, { data: 'web-1:4242' });
    const waiter = await waitOn(b, `${root}/orders`, 'web-2:911');

    const { code, out, err } = await zkrx(['locks', root]);
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const lines = out.trimEnd().split('\n');
    expect(lines[1]).toBe(`${root}/orders  mutex · curator · 1 holder · 1 waiting`);
    expect(lines[2]).toContain(`holds    exclusive  0x${a.sessionId}  web-1:4242`);
    expect(lines[2]).toContain(lease.node.slice(`${root}/orders/`.length));
    expect(lines[3]).toContain(`waits 1  exclusive  0x${b.sessionId}  web-2:911 `);

    const json = await zkrx(['locks', root, '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.out);
    expect(parsed.path).toBe(root);
    expect(parsed.locks).toHaveLength(1);
    expect(parsed.locks[0]).toMatchObject({
      path: `${root}/orders`,
      kind: 'mutex',
      holders: [{ node: lease.node, sessionId: a.sessionId, data: 'web-1:4242' }],
      waiters: [{ node: waiter, sessionId: b.sessionId, data: 'web-2:911' }],
    });
    await lease.release();
  });

  it('leaders: elections and their candidates; nothing found is said, exit 0', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const root = uniqueRoot('cli');
    await a.promises.mkdirp(`${root}/scheduler`, { mode: 'container' });
    const made = [];
    for (const id of ['worker-1', 'worker-2']) {
      made.push(
        await a.promises.create(`${root}/scheduler/${protectedName('latch-').name}`, id, {
          mode: 'ephemeral',
          sequential: true,
        }),
      );
    }
    const { code, out } = await zkrx(['leaders', root]);
    expect(code).toBe(0);
    expect(out).toContain(`${root}/scheduler  election · curator · leader + 1 candidate`);
    expect(out).toMatch(/leads +candidate +0x\w+ +worker-1 /);
    expect(out).toMatch(/waits 1 +candidate +0x\w+ +worker-2 /);
    // No locks there, only an election.
    expect((await zkrx(['locks', root])).out).toBe(`No locks under ${root}.\n`);
    expect(await zkrx(['locks', `${root}/missing`])).toEqual({
      code: 0,
      out: `No locks under ${root}/missing. (${root}/missing does not exist)\n`,
      err: '',
    });
    for (const { path } of made) await a.promises.delete(path);
  });

  it('release --force --yes deletes the node; the holder learns it, the next waiter holds', async () => {
    const [a, b] = (await connectedClients(2)) as [ZkClient, ZkClient];
    const path = `${uniqueRoot('cli')}/stuck`;
    const lease = await acquire(a, path, { data: 'stuck:1' });
    const next = acquire(b, path);
    const lost = firstValueFrom(lease.lost$);
    const { code, out } = await zkrx(['release', lease.node, '--force', '--yes']);
    expect(code).toBe(0);
    expect(out).toContain(`node     ${lease.node}`);
    expect(out).toContain(`session  0x${a.sessionId}`);
    expect(out).toContain(`released: ${lease.node} deleted`);
    expect(await lost).toMatchObject({ reason: 'node-deleted' });
    await (await next).release();
  });

  it('release asks on a terminal, refuses to guess without one, and deletes only the node it showed', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const path = `${uniqueRoot('cli')}/asked`;
    const lease = await acquire(a, path);

    // No terminal, no --yes: nothing done.
    const blind = await zkrx(['release', lease.node, '--force']);
    expect(blind.code).toBe(1);
    expect(blind.err).toBe(
      'zkrx: not released: there is no terminal to confirm on (add --yes to release without asking)\n',
    );
    // "no" on a terminal: nothing done.
    const no = await zkrx(['release', lease.node, '--force'], fakeIo({ answer: 'no' }));
    expect(no.code).toBe(1);
    expect(no.out).toContain('Delete this lock node? [y/N] ');
    expect(no.err).toBe('zkrx: not released (the answer was not "y")\n');
    // The node changes while the person reads (a revoke request): not deleted.
    const changed = await zkrx(
      ['release', lease.node, '--force'],
      fakeIo({
        answer: async () => {
          await requestRevoke(a, lease.node);
          return 'y';
        },
      }),
    );
    expect(changed.code).toBe(1);
    expect(changed.err).toMatch(/changed since it was shown \(a revoke request\?\): not deleted/);
    expect(await a.promises.exists(lease.node)).not.toBeNull();
    // "y": deleted.
    const yes = await zkrx(['release', lease.node, '--force'], fakeIo({ answer: 'y' }));
    expect(yes.code).toBe(0);
    expect(await a.promises.exists(lease.node)).toBeNull();
    // Gone now.
    const gone = await zkrx(['release', lease.node, '--force', '--yes']);
    expect(gone).toMatchObject({
      code: 1,
      err: `zkrx: ${lease.node} is gone already: its hold or wait ended\n`,
    });
  });

  it('release and revoke refuse what is not a lock node, with exit code 2, touching nothing', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const root = uniqueRoot('cli');
    const lease = await acquire(a, `${root}/orders`);
    await a.promises.create(`${root}/config`, 'x', { mode: 'ephemeral' });
    for (const target of [`${root}/orders`, `${root}/config`, root, '/', `${root}/nothing`]) {
      for (const command of [
        ['release', target, '--force', '--yes'],
        ['revoke', target],
      ]) {
        const result = await zkrx(command);
        expect(result.code, `${command.join(' ')}: ${result.err}`).toBe(2);
        expect(result.err).toMatch(/is not a lock node|not a lock node's name/);
      }
    }
    const bad = await zkrx(['release', 'orders', '--force']);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.err).toMatch(/"orders" is not a ZooKeeper path/);
    expect(await a.promises.exists(`${root}/config`)).not.toBeNull();
    expect(lease.isHeld).toBe(true);
    await lease.release();
    await a.promises.delete(`${root}/config`);
  });

  it('revoke asks a revocable holder to release; a node gone is exit code 1', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const lease = await acquire(a, `${uniqueRoot('cli')}/reindex`, {
      revocable: true,
      data: 'idx:9',
    });
    const revoked = firstValueFrom(lease.revoked$);
    const { code, out } = await zkrx(['revoke', lease.node]);
    expect(code).toBe(0);
    expect(out).toMatch(/^asked 0x\w+ \(idx:9\) to release \/cli-\w+\/reindex/);
    expect(await revoked).toMatchObject({ code: 'LockRevoked' });
    await lease.release();
    await vi.waitUntil(async () => (await a.promises.exists(lease.node)) === null);
    expect((await zkrx(['revoke', lease.node])).code).toBe(1);
  });

  it('--watch --json: one JSON line a change, from the watch; stops on Ctrl-C', async () => {
    const [a] = (await connectedClients(1)) as [ZkClient];
    const root = uniqueRoot('cli');
    const io = fakeIo();
    const lines = io.jsonLines;
    const running = zkrx(['locks', root, '--watch', '--json'], io);
    await vi.waitUntil(() => lines().length >= 1, { timeout: 20_000 });
    expect(lines()[0]).toMatchObject({ path: root, locks: [], events: [] });
    const lease = await acquire(a, `${root}/jobs`, { data: 'job-runner:5' });
    await vi.waitUntil(() => lines().some((line) => line.events.length > 0), { timeout: 20_000 });
    const taken = lines().find((line) => line.events.length > 0);
    expect(taken.events).toMatchObject([
      { kind: 'taken', path: `${root}/jobs`, to: { node: lease.node, data: 'job-runner:5' } },
    ]);
    io.interrupt();
    expect((await running).code).toBe(0);
    await lease.release();
  });

  it('help for zkrx and each command; usage errors exit 2; unreachable ZooKeeper exits 1', async () => {
    const io = fakeIo();
    expect(await run(['--help'], io)).toBe(0);
    expect(io.out()).toMatch(/^zkrx — who holds which ZooKeeper lock/);
    for (const command of ['locks', 'leaders', 'release', 'revoke']) {
      const page = fakeIo();
      expect(await run([command, '--help'], page)).toBe(0);
      expect(page.out()).toMatch(new RegExp(`^Usage: zkrx ${command} `));
      const viaHelp = fakeIo();
      expect(await run(['help', command], viaHelp)).toBe(0);
      expect(viaHelp.out()).toBe(page.out());
    }
    const bare = fakeIo();
    expect(await run([], bare)).toBe(2);
    expect(bare.err()).toMatch(/^zkrx — /);
    const unreachable = fakeIo();
    expect(
      await run(['locks', '/', '--connect', '127.0.0.1:1', '--timeout', '1000'], unreachable),
    ).toBe(1);
    expect(unreachable.err()).toBe(
      'zkrx: cannot reach ZooKeeper at 127.0.0.1:1 within 1000 ms: is it running there? (--connect host:port or ZK_CONNECT; --timeout ms)\n',
    );
    const notTerminal = fakeIo();
    expect(await run(['locks', '/', '--watch'], notTerminal)).toBe(2);
    expect(notTerminal.err()).toMatch(/--watch draws on a terminal/);
  });
});
