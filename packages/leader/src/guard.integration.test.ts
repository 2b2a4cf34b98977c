/**
 * Leader-only writes: a leader's guarded writes land only while it leads. A leader that lost
 * leadership — even one that has not heard of it yet — cannot write its "leader-only" config.
 */
import { isZkError, op, type ZkClient, ZkError } from '@zkrx/core';
import { LeaseReleasedError, LockLostError } from '@zkrx/lock';
import { connectedClient, lockPath, proxiedClient } from '@zkrx/test-support';
import { expireSession, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { Observable } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { joinElection, type LeaderTerm, whileLeader } from './index';

/** The leader-only config: a persistent node under a scratch root (removed with `removeConfig`). */
async function configNode(client: ZkClient): Promise<string> {
  const root = uniqueRoot('leader-config');
  await client.promises.create(root);
  await client.promises.create(`${root}/config`, 'initial');
  return `${root}/config`;
}

async function removeConfig(client: ZkClient, config: string): Promise<void> {
  await client.promises.delete(config);
  await client.promises.delete(config.slice(0, config.lastIndexOf('/')));
}

const read = async (client: ZkClient, path: string) =>
  (await client.promises.get(path)).data.toString('utf8');

describe('leader-only writes', () => {
  it('an Election writes only while it leads; the one that lost it writes nothing, before it heard or after', async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const b = await connectedClient();
    const { connectString } = await testZooKeeper();
    const config = await configNode(b);
    const path = lockPath('election');
    const first = joinElection(a, path, { id: 'a' });
    await first.joined;
    await first.whenLeader();
    const second = joinElection(b, path, { id: 'b' });
    await second.joined;
    const results = await first.guard([op.set(config, 'by a')]);
    expect(results).toEqual([expect.objectContaining({ type: 'set' })]);
    // Not the leader: refused at once, nothing sent (ZkError Aborted, as its signal says).
    const refused = await second.guard([op.set(config, 'by b, too early')]).catch((e) => e);
    expect(isZkError(refused, 'Aborted')).toBe(true);
    // a's session ends on the server; a hears nothing of it and still believes it leads.
    proxy.pause();
    await expireSession({ connectString, ...a.sessionCredentials()! });
    await second.whenLeader();
    await second.guard([op.set(config, 'by b')]);
    expect(first.isLeader).toBe(true);
    const stale = first.guard([op.set(config, 'by a, stale')]).catch((caught: unknown) => caught);
    proxy.resume();
    const error = await stale;
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(await read(b, config)).toBe('by b');
    // Now it knows: refused at once with its term's reason, until it leads again.
    await vi.waitUntil(() => !first.isLeader);
    const after = await first.guard([op.set(config, 'by a, later')]).catch((caught) => caught);
    expect(LockLostError.isInstance(after)).toBe(true);
    expect(after).toBe(first.signal.reason);
    expect(await read(b, config)).toBe('by b');
    // Bad input is refused as such, leader or not.
    await expect(first.guard('nope' as never)).rejects.toMatchObject({ code: 'BadArguments' });
    await expect(second.guard([null] as never)).rejects.toMatchObject({
      code: 'BadArguments',
      opIndex: 0,
    });
    // Once close() begins it stops leading at once: no more leader-only writes.
    const closing = second.leave();
    const closed = await second.guard([op.set(config, 'by b, closing')]).catch((e) => e);
    expect(LeaseReleasedError.isInstance(closed)).toBe(true);
    await closing;
    await first.leave();
    expect(await read(b, config)).toBe('by b');
    await removeConfig(b, config);
  });

  it("whileLeader's term writes only while it lasts; a replaced leader's late write is refused", async () => {
    const { client: a, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const b = await connectedClient();
    const { connectString } = await testZooKeeper();
    const config = await configNode(b);
    const path = lockPath('selector');
    const terms: Record<string, LeaderTerm> = {};
    const lead = (id: string) => (term: LeaderTerm) =>
      new Observable<never>(() => {
        terms[id] = term;
      });
    const errors: unknown[] = [];
    const subscriptions = [
      whileLeader(a, path, lead('a'), { id: 'a' }).subscribe({ error: (e) => errors.push(e) }),
    ];
    await vi.waitUntil(() => terms.a !== undefined);
    subscriptions.push(
      whileLeader(b, path, lead('b'), { id: 'b' }).subscribe({ error: (e) => errors.push(e) }),
    );
    const termA = terms.a!;
    await termA.guard([op.set(config, 'by a')]);
    proxy.pause();
    await expireSession({ connectString, ...a.sessionCredentials()! });
    await vi.waitUntil(() => terms.b !== undefined, { timeout: 10_000 });
    await terms.b!.guard([op.set(config, 'by b')]);
    expect(termA.signal.aborted).toBe(false);
    const stale = termA.guard([op.set(config, 'by a, stale')]).catch((caught: unknown) => caught);
    proxy.resume();
    const error = await stale;
    expect(LockLostError.isInstance(error)).toBe(true);
    expect(await read(b, config)).toBe('by b');
    // The old term stays over, whatever a does next (it stands again, behind b).
    await vi.waitUntil(() => termA.signal.aborted);
    await expect(termA.guard([op.set(config, 'by a, later')])).rejects.toSatisfy(
      LockLostError.isInstance,
    );
    expect(await read(b, config)).toBe('by b');
    // A failing op of the leader's own: its ZkError, indexed in its ops; nothing written.
    const failed = await terms
      .b!.guard([op.set(config, 'by b, twice'), op.delete(`${config}-missing`)])
      .catch((caught: unknown) => caught);
    expect(ZkError.isInstance(failed)).toBe(true);
    expect(failed).toMatchObject({ code: 'NoNode', opIndex: 1 });
    expect(await read(b, config)).toBe('by b');
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(errors).toEqual([]);
    await removeConfig(b, config);
  });
});
