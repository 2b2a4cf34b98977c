/** @zkrx/leader from its tarball: one candidate is elected, leaves, and the next one leads. */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { elect } = await load('@zkrx/leader');
  const a = createClient({ connect });
  const b = createClient({ connect });
  const path = `${root}/election`;
  try {
    const first = await elect(a, path, { id: 'a' });
    await first.whenLeader();
    const second = await elect(b, path, { id: 'b' });
    if (second.isLeader) throw new Error('two leaders');
    await first.close();
    await second.whenLeader();
    await second.close();
    await a.promises.delete(root).catch(() => {});
    return '@zkrx/leader: a led, left, then b led';
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
