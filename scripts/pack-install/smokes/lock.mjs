/** @zkrx/lock from its tarball: a lock taken by one client keeps another out until released. */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { acquire, tryAcquire, LockTimeoutError } = await load('@zkrx/lock');
  const a = createClient({ connect });
  const b = createClient({ connect });
  try {
    const lease = await acquire(a, `${root}/lock`, { timeoutMs: 10_000 });
    if ((await tryAcquire(b, `${root}/lock`)) !== null) throw new Error('two holders');
    const timedOut = await acquire(b, `${root}/lock`, { timeoutMs: 50 }).catch((error) => error);
    if (!(timedOut instanceof LockTimeoutError)) {
      throw new Error(`expected LockTimeoutError, got ${timedOut}`);
    }
    await lease.release();
    // The release's delete is on its way (release() does not wait for it): b waits for it.
    const next = await acquire(b, `${root}/lock`, { timeoutMs: 10_000 });
    if (!next.isHeld) throw new Error('free lock not taken');
    await next.release();
    await a.promises.delete(root).catch(() => {}); // the lock path is a container node
    return `@zkrx/lock: fencing tokens ${lease.fencingToken} then ${next.fencingToken}`;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
