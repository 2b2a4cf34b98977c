/**
 * Two copies of @zkrx/core in one process, on purpose: the client from its CommonJS build, the
 * recipes from their ESM builds (which load core's ESM build). Every recipe must work with the
 * other copy's client, and errors must be recognised whichever copy threw them.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export default async function smoke(_load, { connect, root }) {
  // The ES modules first: once a package has been require()d, Deno 2.9 resolves a later import()
  // of it to the "require" build too (Node and Bun keep the "import" build) — one copy, no test.
  const coreEsm = await import('@zkrx/core');
  const lock = await import('@zkrx/lock');
  const { acquireRead, acquireWrite, tryAcquireWrite } = await import('@zkrx/rwlock');
  const { joinElection } = await import('@zkrx/leader');
  const coreCjs = require('@zkrx/core');
  const lockCjs = require('@zkrx/lock');
  if (coreCjs.ZkError === coreEsm.ZkError) throw new Error('expected two copies of @zkrx/core');
  if (lockCjs.LockTimeoutError === lock.LockTimeoutError) {
    throw new Error('expected two copies of @zkrx/lock');
  }
  const a = coreCjs.createClient({ connect });
  const b = coreCjs.createClient({ connect });
  const done = [];
  try {
    // New paths each time: the engine meets NoNode from the CommonJS copy and must know it.
    const held = await lock.acquire(a, `${root}/mutex/x`, { timeoutMs: 10_000 });
    if ((await lock.tryAcquire(b, `${root}/mutex/x`)) !== null) throw new Error('two holders');
    const timedOut = await lock.acquire(b, `${root}/mutex/x`, { timeoutMs: 50 }).catch((e) => e);
    if (
      !lockCjs.LockTimeoutError.isInstance(timedOut) ||
      !(timedOut instanceof lockCjs.LockTimeoutError)
    ) {
      throw new Error(`the CommonJS copy does not know the ESM LockTimeoutError: ${timedOut}`);
    }
    if (!coreCjs.ZkrxError.isInstance(timedOut) || coreCjs.ZkError.isInstance(timedOut)) {
      throw new Error(`the CommonJS ZkrxError does not know the ESM LockTimeoutError: ${timedOut}`);
    }
    if (!coreEsm.ZkClient.isInstance(a) || !(a instanceof coreEsm.ZkClient)) {
      throw new Error('the ESM copy of @zkrx/core does not know the CommonJS client');
    }
    await held.release();
    done.push('mutex');

    const bad = await a.promises.get(`${root}/absent`).catch((e) => e);
    if (!coreEsm.isZkError(bad, 'NoNode') || !(bad instanceof coreEsm.ZkError)) {
      throw new Error(`the ESM copy does not know the CommonJS ZkError: ${bad}`);
    }
    done.push('errors');

    const [r1, r2] = await Promise.all([
      acquireRead(a, `${root}/rw/x`),
      acquireRead(b, `${root}/rw/x`),
    ]);
    if ((await tryAcquireWrite(a, `${root}/rw/x`, { reentrant: false })) !== null) {
      throw new Error('a writer beside readers');
    }
    await r1.release();
    await r2.release();
    const w = await acquireWrite(a, `${root}/rw/x`, { timeoutMs: 10_000 });
    await w.release();
    done.push('rwlock');

    const s = await lock.acquireSemaphore(a, `${root}/sem/x`, { leases: 1 });
    await s.release();
    done.push('semaphore');

    const all = await lock.acquireAll(a, [`${root}/m/one`, `${root}/m/two`]);
    await all.release();
    done.push('multi-lock');

    const election = joinElection(a, `${root}/election/x`, { id: 'mixed' });
    await election.joined;
    await election.whenLeader();
    await election.leave();
    done.push('election');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  return `mixed builds (client from CommonJS core, recipes from ESM): ${done.join(', ')}`;
}
