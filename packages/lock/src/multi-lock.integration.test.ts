import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  proxiedClient,
} from '@zkrx/test-support';
import { describe, expect, it, vi } from 'vitest';
import { acquire, acquireAll, LockTimeoutError } from './index';

describe('multiLock', () => {
  it('never deadlocks two multi-locks asking for the same paths in opposite orders', async () => {
    const [a, b] = await connectedClients(2);
    const paths = [lockPath('p'), lockPath('q'), lockPath('r')];
    const log = new IntervalLog(1);
    await Promise.all(
      [a!, b!].map(async (client, index) => {
        const order = index === 0 ? paths : [...paths].reverse();
        for (let round = 0; round < 20; round++) {
          const all = await acquireAll(client, order, { timeoutMs: 10_000 });
          const record = log.enter(`c${index}`);
          expect(all.isHeld).toBe(true);
          expect(Object.keys(all.fencingTokens).sort()).toEqual([...paths].sort());
          log.exit(record);
          await all.release();
        }
      }),
    );
    expect(log.violations).toEqual([]);
    // Every release was awaited: its nodes were gone before its holder went on.
    for (const path of paths) expect(await childrenOf(a!, path)).toEqual([]);
  });

  it('takes all or nothing: on timeout it releases what it took', async () => {
    const [a, b] = await connectedClients(2);
    const [p, q] = [lockPath('p'), lockPath('q')];
    const blocker = await acquire(b!, q);
    const error = await acquireAll(a!, [p, q], { timeoutMs: 300 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(await childrenOf(a!, p)).toEqual([]);
    expect(await childrenOf(a!, q)).toHaveLength(1);
    await blocker.release();
  });

  it('starts over when a lock it took is lost while it waits for the next: all held, or none', async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const other = await connectedClient();
    const first = lockPath('first');
    const second = `${first.slice(0, first.lastIndexOf('/'))}/second`;
    const blocker = await acquire(other, second);
    const pending = acquireAll(client, [first, second]);
    // It holds `first` and waits on `second`...
    await vi.waitUntil(async () => (await childrenOf(other, second)).length === 2);
    // ...when its connection drops: `first` is lost (suspended), the session lives on.
    proxy.cut();
    await vi.waitUntil(() => client.state === 'reconnected', { timeout: 10_000 });
    await blocker.release();
    const all = await pending;
    expect(all.isHeld).toBe(true);
    expect(all.leases.every((lease) => lease.isHeld)).toBe(true);
    expect(all.signal.aborted).toBe(false);
    await all.release();
  });

  it('refuses an empty list or a repeated path', async () => {
    const [a] = await connectedClients(1);
    await expect(acquireAll(a!, [])).rejects.toMatchObject({ code: 'BadArguments' });
    const path = lockPath('p');
    await expect(acquireAll(a!, [path, path])).rejects.toMatchObject({ code: 'BadArguments' });
    expect(await a!.promises.exists(path)).toBeNull();
  });
});
