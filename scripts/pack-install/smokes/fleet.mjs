/**
 * @zkrx/fleet from its tarball: two members share four items, never one item in both
 * assignments; one leaves, and the other takes its items, each with a higher fencing token.
 */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { inspectFleet, partition } = await load('@zkrx/fleet');
  const items = ['shard-0', 'shard-1', 'shard-2', 'shard-3'];
  const path = `${root}/fleet-${process.pid}`;
  const a = createClient({ connect });
  const b = createClient({ connect });
  const problems = [];
  const latest = new Map();
  const waiting = new Set();
  /** A member; `until(check)` resolves once `check(latest assignments)` holds. */
  const join = (client, id) =>
    partition(client, path, items, { id }).subscribe({
      next: (assignment) => {
        for (const item of assignment.added) {
          for (const [other, theirs] of latest) {
            if (other !== id && theirs.items.includes(item)) problems.push(`${item} owned twice`);
          }
        }
        latest.set(id, assignment);
        for (const check of waiting) check();
      },
      error: (error) => problems.push(`${id}: ${error}`),
    });
  const until = (predicate) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out: ${problems}`)), 30_000);
      const check = () => {
        if (problems.length > 0 || !predicate()) return;
        waiting.delete(check);
        clearTimeout(timer);
        resolve();
      };
      waiting.add(check);
      check();
    });
  const owns = (id) => latest.get(id)?.items ?? [];
  try {
    const one = join(a, 'one');
    await until(() => owns('one').length === 4);
    const two = join(b, 'two');
    await until(() => owns('one').length === 2 && owns('two').length === 2);
    const fleet = await inspectFleet(a, path);
    if (!fleet?.balanced || fleet.members.length !== 2) {
      throw new Error(`inspectFleet: ${JSON.stringify(fleet)}`);
    }
    const before = latest.get('one').owned;
    one.unsubscribe();
    latest.delete('one');
    await until(() => owns('two').length === 4);
    for (const [item, owned] of before) {
      if (!owned.signal.aborted) throw new Error(`${item}: its signal did not abort`);
      if (latest.get('two').owned.get(item).fencingToken <= owned.fencingToken) {
        throw new Error(`${item}: token did not rise`);
      }
    }
    two.unsubscribe();
    if (problems.length > 0) throw new Error(problems.join('; '));
    return `@zkrx/fleet: 2 members shared 4 items, one left, ${before.size} moved with rising tokens`;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
