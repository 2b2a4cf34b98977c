/**
 * The client's CPU per acquisition of a mutex, for each form users write: `acquire`, `acquire`
 * with its `signal` read, the `mutex()` observable (first lease, released by unsubscribing), and
 * `acquire` with `timeoutMs`; and `raw`, the lock's own three requests with no lock around them
 * (its floor). One process alternates blocks of each form (the order rotated from block to
 * block), uncontended (one worker) and with W workers on one client (one session: the local
 * hand-off), and reads `process.cpuUsage()` (user + system) around each block. The server is
 * another process: its CPU is not counted. Prints one JSON line per setup and form: µs of CPU
 * per acquisition (median of the blocks, the first two dropped), its min–max, the system part,
 * and the blocks' median acquisitions per second.
 *
 *   node packages/bench/dist/tools/lock-cpu.js <host:port> [blocks=12] [ops=1000] [waiters=8]
 *     [forms=acquire,signal,observable,timeout] [setups=uncontended,one-client] [checkout,...]
 *
 * Checkouts (built: `pnpm build`) compare two versions of the code in one process, their blocks
 * alternated too, each on a client of its own build: a change's cost or saving, with the same
 * machine, load and JIT around both (the line then names the checkout), and per form the median
 * of the per-block differences to the first checkout. The observable form
 * turns on Node's async hooks for the whole process (its lease is emitted in an
 * `AsyncLocalStorage` context): measure it apart from the others.
 *
 * Run it under `node --cpu-prof` with one form to see where that form's CPU goes.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ZkClient } from '@zkrx/core';
import * as ownCore from '@zkrx/core';
import type { Lease } from '@zkrx/lock';
import * as ownLock from '@zkrx/lock';
import { percentile, round } from '../stats';

const [
  connect,
  blocksArgument,
  opsArgument,
  waitersArgument,
  formsArgument,
  setupsArgument,
  checkoutsArgument,
] = process.argv.slice(2);
if (!connect) {
  console.error(
    'usage: node lock-cpu.js <host:port> [blocks] [ops] [waiters] [forms,...] [setups,...] [checkout,...]',
  );
  process.exit(2);
}
const blocks = Number(blocksArgument ?? 12);
const ops = Number(opsArgument ?? 1000);
const waiters = Number(waitersArgument ?? 8);

interface Held {
  readonly lease: Lease | undefined;
  release(): Promise<void>;
}
type Take = (client: ZkClient, path: string) => Promise<Held>;

/** One build of core and lock: this bench's own, or a checkout's. */
interface Build {
  readonly name: string;
  readonly client: ZkClient;
  readonly takes: Record<string, Take>;
}

const rawPath = `/lock-cpu-raw-${process.pid}`;

function takesOf(lock: typeof ownLock): Record<string, Take> {
  const { acquire, mutex } = lock;
  return {
    // The floor: the lock's own requests with no lock around them — a protected sequential
    // ephemeral create with the listing pipelined behind it, then a delete sent as a release
    // sends it.
    raw: async (client) => {
      const created = client.promises.create(`${rawPath}/_c_${randomUUID()}-lock-`, '', {
        mode: 'ephemeral',
        sequential: true,
      });
      const listed = client.promises.children(rawPath);
      const { path } = await created;
      await listed;
      // Sent now and not awaited, as a lease's release: the next create goes out with it.
      const release = async () => void client.promises.delete(path).catch(() => {});
      return { lease: undefined, release };
    },
    acquire: async (client, path) => {
      const lease = await acquire(client, path);
      return { lease, release: () => lease.release() };
    },
    signal: async (client, path) => {
      const lease = await acquire(client, path);
      if (lease.signal.aborted) throw lease.signal.reason;
      return { lease, release: () => lease.release() };
    },
    observable: (client, path) =>
      new Promise<Held>((resolve, reject) => {
        const subscription = mutex(client, path).subscribe({
          next: (lease) => resolve({ lease, release: async () => subscription.unsubscribe() }),
          error: reject,
        });
      }),
    timeout: async (client, path) => {
      const lease = await acquire(client, path, { timeoutMs: 60_000 });
      return { lease, release: () => lease.release() };
    },
  };
}

async function buildOf(name: string, core: typeof ownCore, lock: typeof ownLock): Promise<Build> {
  const client = core.createClient({ connect: connect as string, sessionTimeoutMs: 10_000 });
  await client.connected();
  return { name, client, takes: takesOf(lock) };
}

const checkouts = checkoutsArgument?.split(',') ?? [];
const builds: Build[] =
  checkouts.length === 0
    ? [await buildOf('', ownCore, ownLock)]
    : await Promise.all(
        checkouts.map(async (checkout) => {
          const root = resolve(checkout, 'packages');
          const core = (await import(join(root, 'core/dist/index.js'))) as typeof ownCore;
          const lock = (await import(join(root, 'lock/dist/index.js'))) as typeof ownLock;
          return buildOf(checkout, core, lock);
        }),
      );

const forms = (formsArgument ?? 'acquire,signal,observable,timeout').split(',');
for (const form of forms) {
  if (!(form in takesOf(ownLock))) throw new Error(`unknown form ${form}`);
}
const setups = (setupsArgument ?? 'uncontended,one-client').split(',');
const base = `/lock-cpu-${process.pid}`;
const admin = (builds[0] as Build).client;
if (forms.includes('raw')) await admin.promises.create(rawPath, '');

/** One block: `ops` acquisitions by `workers` workers of one client on `path`. */
async function block(client: ZkClient, take: Take, path: string, workers: number): Promise<void> {
  let left = ops;
  let holders = 0;
  const loop = async () => {
    while (left > 0) {
      left -= 1;
      const held = await take(client, path);
      holders += 1;
      if (holders !== 1) throw new Error(`${holders} holders at once`);
      holders -= 1;
      await held.release();
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}

/** Every (build, form) pair of a setup, rotated from block to block. */
const runs = builds.flatMap((build) => forms.map((form) => ({ build, form })));
const cpu = new Map<string, number[]>();
const system = new Map<string, number[]>();
const rates = new Map<string, number[]>();
const keyOf = (setup: string, build: Build, form: string) =>
  `${setup}\u0000${build.name}\u0000${form}`;
for (let index = 0; index < blocks; index++) {
  for (const setup of setups) {
    const workers = setup === 'uncontended' ? 1 : waiters;
    for (let offset = 0; offset < runs.length; offset++) {
      const { build, form } = runs[(offset + index) % runs.length] as (typeof runs)[number];
      const path = `${base}/${setup}-${form}-${builds.indexOf(build)}`;
      const before = process.cpuUsage();
      const started = performance.now();
      await block(build.client, build.takes[form] as Take, path, workers);
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(before);
      if (index < 2) continue;
      const key = keyOf(setup, build, form);
      cpu.set(key, [...(cpu.get(key) ?? []), (used.user + used.system) / ops]);
      system.set(key, [...(system.get(key) ?? []), used.system / ops]);
      rates.set(key, [...(rates.get(key) ?? []), ops / seconds]);
    }
  }
}
for (const setup of setups) {
  for (const { build, form } of runs) {
    const key = keyOf(setup, build, form);
    const samples = cpu.get(key) ?? [];
    console.log(
      JSON.stringify({
        ...(build.name ? { checkout: build.name } : {}),
        setup,
        form,
        workers: setup === 'uncontended' ? 1 : waiters,
        blocks: samples.length,
        ops,
        cpu_us_per_acquisition: round(percentile(samples, 50), 1),
        cpu_us_min: round(Math.min(...samples), 1),
        cpu_us_max: round(Math.max(...samples), 1),
        system_us_per_acquisition: round(percentile(system.get(key) ?? [], 50), 1),
        ops_per_s: round(percentile(rates.get(key) ?? [], 50), 0),
      }),
    );
  }
}
// Paired by block: each checkout's CPU per acquisition less the first's, in the same block.
for (const setup of setups) {
  for (const form of forms) {
    const first = cpu.get(keyOf(setup, builds[0] as Build, form)) ?? [];
    for (const build of builds.slice(1)) {
      const deltas = (cpu.get(keyOf(setup, build, form)) ?? []).map(
        (value, index) => value - (first[index] as number),
      );
      console.log(
        JSON.stringify({
          setup,
          form,
          checkout: build.name,
          against: (builds[0] as Build).name,
          delta_cpu_us_median: round(percentile(deltas, 50), 1),
          delta_cpu_us_min: round(Math.min(...deltas), 1),
          delta_cpu_us_max: round(Math.max(...deltas), 1),
        }),
      );
    }
  }
}
if (forms.includes('raw')) await admin.promises.delete(rawPath);
for (const build of builds) await build.client.close();
