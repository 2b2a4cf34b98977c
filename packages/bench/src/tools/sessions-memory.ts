/**
 * Many sessions in one process: opens N sessions (1,000 by default) with the TypeScript
 * transport, each holding one ephemeral node and one data watch, and reports the heap and RSS
 * each costs (after a full GC, against the process before them), how long connecting all took,
 * and that every session works (a sync round over all of them). `--expose-gc` is required.
 *
 *   node --expose-gc packages/bench/dist/tools/sessions-memory.js <host:port> [sessions] [native]
 *
 * With `native` as the third argument, the same with the native transport (stock binding).
 */
import { performance } from 'node:perf_hooks';
import { createClient, type ZkClient } from '@zkrx/core';
import { nativeTransport } from '@zkrx/core/native';
import { round } from '../stats';

const connect = process.argv[2];
const count = Number(process.argv[3] ?? 1_000);
const native = process.argv[4] === 'native';
const gc = (globalThis as { gc?: () => void }).gc;
if (!connect || !gc) {
  console.error('usage: node --expose-gc sessions-memory.js <host:port> [sessions] [native]');
  process.exit(2);
}

function settle(): NodeJS.MemoryUsage {
  gc!();
  gc!();
  return process.memoryUsage();
}

const admin = createClient({ connect });
await admin.connected();
const base = `/sessions-memory-${process.pid}`;
await admin.promises.create(base, '');
const transport = native ? nativeTransport() : undefined;
// Warm the code paths (and load the addon) before the baseline.
const warm = createClient({ connect, transport });
await warm.connected();
await warm.close();
const before = settle();

const started = performance.now();
const clients: ZkClient[] = [];
const subscriptions: { unsubscribe(): void }[] = [];
// Connected in batches of 50: a thousand connects at once is a test of the server's backlog.
for (let index = 0; index < count; index += 50) {
  const batch = Array.from({ length: Math.min(50, count - index) }, () =>
    createClient({ connect, sessionTimeoutMs: 30_000, transport }),
  );
  await Promise.all(batch.map((client) => client.connected(60_000)));
  clients.push(...batch);
}
const connectSeconds = (performance.now() - started) / 1000;
await Promise.all(
  clients.map((client, index) =>
    client.promises.create(`${base}/s${index}`, 'x', { mode: 'ephemeral' }),
  ),
);
await Promise.all(
  clients.map(
    (client, index) =>
      new Promise<void>((resolve) => {
        subscriptions.push(client.watchData(`${base}/s${index}`).subscribe(() => resolve()));
      }),
  ),
);
const open = settle();
const syncStarted = performance.now();
await Promise.all(clients.map((client) => client.promises.sync(base)));
const syncRoundMs = performance.now() - syncStarted;

console.log(
  JSON.stringify({
    transport: native ? 'native' : 'typescript',
    sessions: count,
    connect_seconds: round(connectSeconds, 2),
    heap_bytes_per_session: Math.round((open.heapUsed - before.heapUsed) / count),
    external_bytes_per_session: Math.round((open.external - before.external) / count),
    rss_bytes_per_session: Math.round((open.rss - before.rss) / count),
    sync_round_over_all_ms: round(syncRoundMs, 1),
  }),
);
for (const subscription of subscriptions) subscription.unsubscribe();
for (let index = 0; index < clients.length; index += 100) {
  await Promise.all(clients.slice(index, index + 100).map((client) => client.close()));
}
await admin.promises.delete(base);
await admin.close();
