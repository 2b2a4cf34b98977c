/**
 * What the lock adds to the client's own round trips: one process alternates blocks of 500 raw
 * create+delete rounds and 500 uncontended acquire+release rounds on one session (20 blocks, the
 * first two dropped), so both see the same server and the same JIT state, and prints the medians.
 *
 *   node packages/bench/tools/lock-overhead.mjs <host:port>     (after `pnpm build`)
 */
import { performance } from 'node:perf_hooks';
import { createClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';

const connect = process.argv[2];
if (!connect) {
  console.error('usage: node lock-overhead.mjs <host:port>');
  process.exit(2);
}
const client = createClient({ connect });
await client.connected();
const base = `/lock-overhead-${process.pid}`;
await client.promises.create(base, '');
const lockPath = `${base}/lock`;
const rawPath = `${base}/raw`;

const kinds = {
  raw: async () => {
    await client.promises.create(rawPath, '', { mode: 'ephemeral' });
    await client.promises.delete(rawPath);
  },
  lock: async () => {
    const lease = await acquire(client, lockPath);
    await lease.release();
  },
};
const times = { raw: [], lock: [] };
for (let block = 0; block < 20; block++) {
  for (const [kind, round] of Object.entries(kinds)) {
    for (let index = 0; index < 500; index++) {
      const started = performance.now();
      await round();
      if (block >= 2) times[kind].push(performance.now() - started);
    }
  }
}
const median = (values) => values.sort((x, y) => x - y)[values.length >> 1];
console.log(
  JSON.stringify({
    raw_create_delete_p50_ms: Number(median(times.raw).toFixed(4)),
    acquire_release_p50_ms: Number(median(times.lock).toFixed(4)),
  }),
);
await client.promises.delete(lockPath).catch(() => {});
await client.promises.delete(base);
await client.close();
