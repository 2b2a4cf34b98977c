/**
 * Times the `zookeeper` addon itself, below @zkrx/core: how long the JavaScript thread spends
 * inside a create and a delete call, and a whole create+delete round trip (medians of 5,000,
 * the first fifth dropped). Give it a build of the addon, to compare two builds in alternation
 * against one server:
 *
 *   node packages/bench/tools/addon-call-time.mjs <path/to/zookeeper.node> <host:port>
 *
 * The build in use is node_modules/.pnpm/zookeeper@7.3.0_patch_hash=…/node_modules/zookeeper/
 * build/Release/zookeeper.node (`readlink -f packages/core/node_modules/zookeeper`).
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const [addonPath, connect] = process.argv.slice(2);
if (!addonPath || !connect) {
  console.error('usage: node addon-call-time.mjs <path/to/zookeeper.node> <host:port>');
  process.exit(2);
}
const { ZooKeeper } = createRequire(import.meta.url)(addonPath);
const rounds = 5_000;
const median = (values) => {
  const kept = values.slice(values.length / 5).sort((x, y) => x - y);
  return kept[kept.length >> 1];
};

const zk = new ZooKeeper();
const connected = new Promise((resolve) => {
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
const inCreate = [];
const inDelete = [];
const round = [];
const call = (into, start) =>
  new Promise((resolve) => {
    const before = performance.now();
    start(() => resolve());
    into.push(performance.now() - before);
  });
for (let index = 0; index < rounds; index++) {
  const started = performance.now();
  await call(inCreate, (done) => zk.a_create(path, Buffer.alloc(0), 1, done));
  await call(inDelete, (done) => zk.a_delete_(path, -1, done));
  round.push(performance.now() - started);
}
console.log(
  JSON.stringify({
    addon: addonPath,
    create_call_us: Number((median(inCreate) * 1000).toFixed(1)),
    delete_call_us: Number((median(inDelete) * 1000).toFixed(1)),
    create_delete_ms: Number(median(round).toFixed(4)),
  }),
);
zk.close();
setTimeout(() => process.exit(0), 100);
