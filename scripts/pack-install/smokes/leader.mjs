/** @zkrx/leader from its tarball: one candidate is elected, leaves, and the next one leads. */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { joinElection } = await load('@zkrx/leader');
  const a = createClient({ connect });
  const b = createClient({ connect });
  const path = `${root}/election`;
  try {
    const first = joinElection(a, path, { id: 'a' });
    await first.joined;
    await first.whenLeader();
    const second = joinElection(b, path, { id: 'b' });
    await second.joined;
    if (second.isLeader) throw new Error('two leaders');
    await first.leave();
    await second.whenLeader();
    await second.leave();
    await a.promises.delete(root).catch(() => {});
    return '@zkrx/leader: a led, left, then b led';
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
