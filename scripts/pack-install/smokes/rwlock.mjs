/** @zkrx/rwlock from its tarball: two readers share, a writer waits for them. */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { acquireRead, acquireWrite, tryAcquireWrite } = await load('@zkrx/rwlock');
  const a = createClient({ connect });
  const b = createClient({ connect });
  const path = `${root}/catalog`;
  try {
    const [first, second] = await Promise.all([acquireRead(a, path), acquireRead(b, path)]);
    if ((await tryAcquireWrite(a, path, { reentrant: false })) !== null) {
      throw new Error('a writer got in beside readers');
    }
    const writing = acquireWrite(b, path, { timeoutMs: 10_000, reentrant: false });
    await first.release();
    await second.release();
    const writer = await writing;
    await writer.release();
    await a.promises.delete(root).catch(() => {});
    return `@zkrx/rwlock: two readers, then a writer (token ${writer.fencingToken})`;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
