/**
 * Times the `zookeeper` addon itself, below @zkrx/core: how long the JavaScript thread spends
 * inside a create and a delete call, and a whole create+delete round trip (medians of 5,000,
 * the first fifth dropped). Give it a build of the addon, to compare two builds in alternation
 * against one server:
 *
 *   node packages/bench/dist/tools/addon-call-time.js <path/to/zookeeper.node> <host:port>
 *
 * The build in use is node_modules/.pnpm/zookeeper@7.3.0_patch_hash=…/node_modules/zookeeper/
 * build/Release/zookeeper.node (`readlink -f packages/core/node_modules/zookeeper`).
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { percentile, round } from '../stats';

/** The few calls of the addon this tool makes (core's binding.ts types them all). */
interface Addon {
  emit: (event: string) => void;
  init(options: Record<string, unknown>): void;
  a_create(path: string, data: Buffer, flags: number, done: () => void): number;
  a_delete_(path: string, version: number, done: () => void): number;
  close(): void;
}

const [addonPath, connect] = process.argv.slice(2);
if (!addonPath || !connect) {
  console.error('usage: node addon-call-time.js <path/to/zookeeper.node> <host:port>');
  process.exit(2);
}
const { ZooKeeper } = createRequire(import.meta.url)(addonPath) as { ZooKeeper: new () => Addon };
const count = 5_000;
/** The median of the samples after the first fifth (warm-up). */
const median = (samples: number[]) => percentile(samples.slice(samples.length / 5), 50);

const zk = new ZooKeeper();
const connected = new Promise<void>((resolve) => {
  zk.emit = (event) => {
    if (event === 'connect') resolve();
  };
});
zk.init({
  connect,
  timeout: 10_000,
  debug_level: 0,
  host_order_deterministic: false,
  data_as_buffer: true,
  response_counter_limit: 10_000,
});
await connected;

const path = `/addon-call-time-${process.pid}`;
const inCreate: number[] = [];
const inDelete: number[] = [];
const trips: number[] = [];
const call = (into: number[], start: (done: () => void) => void) =>
  new Promise<void>((resolve) => {
    const before = performance.now();
    start(() => resolve());
    into.push(performance.now() - before);
  });
for (let index = 0; index < count; index++) {
  const started = performance.now();
  await call(inCreate, (done) => zk.a_create(path, Buffer.alloc(0), 1, done));
  await call(inDelete, (done) => zk.a_delete_(path, -1, done));
  trips.push(performance.now() - started);
}
console.log(
  JSON.stringify({
    addon: addonPath,
    create_call_us: round(median(inCreate) * 1000, 1),
    delete_call_us: round(median(inDelete) * 1000, 1),
    create_delete_ms: round(median(trips), 4),
  }),
);
zk.close();
setTimeout(() => process.exit(0), 100);
