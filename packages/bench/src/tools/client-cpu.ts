/**
 * The client's CPU per request, for each transport: one process alternates blocks of requests on
 * a TypeScript-transport session and on a native-transport session (the stock `zookeeper`
 * binding), and reads `process.cpuUsage()` (user + system: every thread of this process, the
 * C client's included) around each block. The server is another process: its CPU is not counted.
 * Three workloads: sequential create+delete (2 requests a round), sequential getChildren, and
 * bursts of 100 pipelined `get`s. Prints one JSON line: µs of CPU per request (medians of the
 * blocks, the first two dropped) and the wall-clock p50 of a round.
 *
 *   node packages/bench/dist/tools/client-cpu.js <host:port> [blocks]     (after `pnpm build`)
 */
import { performance } from 'node:perf_hooks';
import { createClient, type ZkClient } from '@zkrx/core';
import { nativeTransport } from '@zkrx/core/native';
import { percentile, round } from '../stats';

const connect = process.argv[2];
const blocks = Number(process.argv[3] ?? 12);
if (!connect) {
  console.error('usage: node client-cpu.js <host:port> [blocks]');
  process.exit(2);
}

const transports = {
  typescript: undefined,
  native: nativeTransport(),
} as const;
const clients = new Map<string, ZkClient>();
for (const [name, transport] of Object.entries(transports)) {
  const client = createClient({ connect, sessionTimeoutMs: 10_000, transport });
  await client.connected();
  clients.set(name, client);
}
const admin = clients.get('typescript')!;
const base = `/client-cpu-${process.pid}`;
await admin.promises.create(base, '');
await admin.promises.create(`${base}/child`, 'x');

/** One round of a workload on a client, and how many requests it makes. */
const workloads: Record<string, { requests: number; round: (client: ZkClient) => Promise<void> }> =
  {
    'create+delete': {
      requests: 2,
      round: async (client) => {
        const path = `${base}/node-${client.transportName}`;
        await client.promises.create(path, 'data', { mode: 'ephemeral' });
        await client.promises.delete(path);
      },
    },
    getChildren: {
      requests: 1,
      round: async (client) => {
        await client.promises.children(base);
      },
    },
    'pipelined get x100': {
      requests: 100,
      round: async (client) => {
        await Promise.all(Array.from({ length: 100 }, () => client.promises.get(`${base}/child`)));
      },
    },
  };
const roundsPerBlock: Record<string, number> = {
  'create+delete': 500,
  getChildren: 1_000,
  'pipelined get x100': 50,
};

const cpuPerRequest = new Map<string, number[]>();
const wall = new Map<string, number[]>();
for (let block = 0; block < blocks; block++) {
  for (const [workload, { requests, round: once }] of Object.entries(workloads)) {
    for (const [transport, client] of clients) {
      const key = `${transport} ${workload}`;
      const rounds = roundsPerBlock[workload]!;
      const samples: number[] = [];
      const cpu = process.cpuUsage();
      for (let index = 0; index < rounds; index++) {
        const started = performance.now();
        await once(client);
        samples.push(performance.now() - started);
      }
      const used = process.cpuUsage(cpu);
      if (block < 2) continue;
      const perRequest = (used.user + used.system) / (rounds * requests);
      cpuPerRequest.set(key, [...(cpuPerRequest.get(key) ?? []), perRequest]);
      wall.set(key, [...(wall.get(key) ?? []), percentile(samples, 50)]);
    }
  }
}

const result: Record<string, number> = {};
for (const [key, samples] of cpuPerRequest) {
  result[`${key}: cpu_us_per_request`] = round(percentile(samples, 50), 1);
  result[`${key}: round_p50_ms`] = round(percentile(wall.get(key)!, 50), 4);
}
console.log(JSON.stringify(result));
await admin.promises.delete(`${base}/child`);
await admin.promises.delete(base);
for (const client of clients.values()) await client.close();
