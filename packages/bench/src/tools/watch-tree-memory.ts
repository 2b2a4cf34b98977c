/**
 * What a `watchTree` costs per node: builds a tree of P parents × C children under a fresh path
 * (10,100 nodes by default), subscribes one `watchTree` to it, waits for its `started` (the
 * snapshot is then complete), and reports the heap it holds per node after a full GC, against
 * the same client before. `--expose-gc` is required.
 *
 *   node --expose-gc packages/bench/dist/tools/watch-tree-memory.js <host:port> [parents] [children]
 */
import { createClient, type TreeEvent } from '@zkrx/core';

const connect = process.argv[2];
const parents = Number(process.argv[3] ?? 100);
const children = Number(process.argv[4] ?? 100);
const gc = (globalThis as { gc?: () => void }).gc;
if (!connect || !gc) {
  console.error('usage: node --expose-gc watch-tree-memory.js <host:port> [parents] [children]');
  process.exit(2);
}

function heapUsed(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** Subscribes and resolves once `started` came; returns the subscription. */
function started(client: ReturnType<typeof createClient>, root: string) {
  return new Promise<{ unsubscribe(): void }>((resolve, reject) => {
    const subscription = client.watchTree(root).subscribe({
      next: (event: TreeEvent) => {
        if (event.type === 'resync' && event.reason === 'started') resolve(subscription);
      },
      error: reject,
    });
  });
}

const admin = createClient({ connect });
await admin.connected();
const base = `/watch-tree-memory-${process.pid}`;
await admin.promises.create(base);
const paths: string[] = [];
for (let parent = 0; parent < parents; parent++) {
  const parentPath = `${base}/parent-${String(parent).padStart(4, '0')}`;
  paths.push(parentPath);
  for (let child = 0; child < children; child++) {
    paths.push(`${parentPath}/node-${String(child).padStart(6, '0')}`);
  }
}
// Parents before their children; 500 creates in flight at a time.
for (let index = 0; index < paths.length; index += 500) {
  await Promise.all(paths.slice(index, index + 500).map((path) => admin.promises.create(path)));
}
const nodes = paths.length + 1;
const client = createClient({ connect, sessionTimeoutMs: 30_000 });
await client.connected();
// Warm the code paths on a small tree before the baseline.
(await started(client, `${base}/parent-0000`)).unsubscribe();
const before = heapUsed();
const startedAt = performance.now();
const subscription = await started(client, base);
const walkMs = performance.now() - startedAt;
const after = heapUsed();
console.log(
  JSON.stringify({
    nodes,
    average_path_chars: Math.round(
      paths.reduce((sum, path) => sum + path.length, 0) / paths.length,
    ),
    heap_bytes_per_node: Math.round((after - before) / nodes),
    first_walk_ms: Math.round(walkMs),
  }),
);
subscription.unsubscribe();
await client.close();
for (let index = paths.length - 1; index >= 0; index -= 500) {
  const batch = paths.slice(Math.max(0, index - 499), index + 1).reverse();
  await Promise.all(batch.map((path) => admin.promises.delete(path)));
}
await admin.promises.delete(base);
await admin.close();
