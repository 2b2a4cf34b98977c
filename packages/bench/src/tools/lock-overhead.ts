/**
 * What the lock adds to the client's own round trips: one process alternates blocks of 500 rounds
 * of raw create+delete, of create+delete of a node named as the lock names its nodes (protected,
 * sequential, ephemeral) and of uncontended acquire+release, on one session (20 blocks, the first
 * two dropped), so all see the same server and the same JIT state, and prints the medians.
 *
 *   node packages/bench/dist/tools/lock-overhead.js <host:port>     (after `pnpm build`)
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { percentile, round } from '../stats';

const connect = process.argv[2];
if (!connect) {
  console.error('usage: node lock-overhead.js <host:port>');
  process.exit(2);
}
const client = createClient({ connect });
await client.connected();
const base = `/lock-overhead-${process.pid}`;
await client.promises.create(base, '');
const lockPath = `${base}/lock`;
const rawPath = `${base}/raw`;

const kinds: Record<string, () => Promise<void>> = {
  raw: async () => {
    await client.promises.create(rawPath, '', { mode: 'ephemeral' });
    await client.promises.delete(rawPath);
  },
  // What the lock's own znodes cost: a protected sequential ephemeral node, as the lock names it.
  'raw-sequential': async () => {
    const created = await client.promises.create(`${base}/_c_${randomUUID()}-lock-`, '', {
      mode: 'ephemeral',
      sequential: true,
    });
    await client.promises.delete(created.path);
  },
  lock: async () => {
    const lease = await acquire(client, lockPath);
    await lease.release();
  },
};
const times = new Map(Object.keys(kinds).map((kind) => [kind, [] as number[]]));
for (let block = 0; block < 20; block++) {
  for (const [kind, trip] of Object.entries(kinds)) {
    for (let index = 0; index < 500; index++) {
      const started = performance.now();
      await trip();
      if (block >= 2) times.get(kind)?.push(performance.now() - started);
    }
  }
}
console.log(
  JSON.stringify(
    Object.fromEntries(
      [...times].map(([kind, samples]) => [`${kind}_p50_ms`, round(percentile(samples, 50), 4)]),
    ),
  ),
);
await client.promises.delete(lockPath).catch(() => {});
await client.promises.delete(base);
await client.close();
