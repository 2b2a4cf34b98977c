/**
 * What a contended mutex costs the server under the levers issue 18 names: waiters in separate
 * sessions or all in one client, and leases nobody listens to (`acquire`) or listened to from the
 * start (the observable `mutex()`, whose node is watched from creation: the trusted hand-off).
 * Each variant runs W workers looping acquire → release on a fresh path until N acquisitions; the
 * variants alternate in rounds against one server. Prints one JSON line per run, then a table.
 *
 *   node packages/bench/dist/tools/lock-levers.js <host:port> [ops=2000] [rounds=3] [waiters=2,8]
 */
import { performance } from 'node:perf_hooks';
import { createClient, type ZkClient } from '@zkrx/core';
import { acquire, type Lease, mutex } from '@zkrx/lock';
import { mntr } from '@zkrx/testing';
import { percentile, round } from '../stats';

const [connect, opsArgument, roundsArgument, waitersArgument] = process.argv.slice(2);
if (!connect) {
  console.error('usage: node lock-levers.js <host:port> [ops] [rounds] [waiters,...]');
  process.exit(2);
}
const ops = Number(opsArgument ?? 2000);
const rounds = Number(roundsArgument ?? 3);
const waiterCounts = (waitersArgument ?? '2,8').split(',').map(Number);

async function packetsSent(): Promise<number> {
  return Number((await mntr(connect as string)).zk_packets_sent);
}

/** Resolves the lease the observable form emits; `release()` ends it (and the observable). */
function observedAcquire(client: ZkClient, path: string): Promise<Lease> {
  return new Promise<Lease>((resolve, reject) => {
    mutex(client, path).subscribe({ next: resolve, error: reject });
  });
}

interface Variant {
  readonly sessions: 'separate' | 'one client';
  readonly lease: 'acquire' | 'observed';
}
const variants: Variant[] = [
  { sessions: 'separate', lease: 'acquire' },
  { sessions: 'separate', lease: 'observed' },
  { sessions: 'one client', lease: 'acquire' },
  { sessions: 'one client', lease: 'observed' },
];

// The lock paths are containers (made by the lock, parents too): the server reaps them once idle.
const base = `/lock-levers-${process.pid}`;
const mntrSelf = -(await packetsSent()) + (await packetsSent());

async function run(variant: Variant, waiters: number, index: number) {
  const count = variant.sessions === 'separate' ? waiters : 1;
  const clients = Array.from({ length: count }, () =>
    createClient({ connect: connect as string, sessionTimeoutMs: 10_000 }),
  );
  await Promise.all(clients.map((client) => client.connected()));
  const path = `${base}/${index}`;
  const take = variant.lease === 'observed' ? observedAcquire : acquire;
  let left = 0;
  let holders = 0;
  let lastRelease = 0;
  const handoffs: number[] = [];
  const loop = async (client: ZkClient) => {
    while (left > 0) {
      left -= 1;
      const lease = await take(client, path);
      const got = performance.now();
      holders += 1;
      if (holders !== 1) throw new Error(`${holders} holders at once`);
      if (lastRelease !== 0) handoffs.push(got - lastRelease);
      holders -= 1;
      lastRelease = performance.now();
      await lease.release();
    }
  };
  const workers = () =>
    Array.from({ length: waiters }, (_, worker) => loop(clients[worker % count] as ZkClient));
  // Warm-up, unmeasured.
  left = Math.max(20, ops / 4);
  await Promise.all(workers());
  lastRelease = 0;
  handoffs.length = 0;
  const before = await packetsSent();
  const started = performance.now();
  left = ops;
  await Promise.all(workers());
  const seconds = (performance.now() - started) / 1000;
  const packets = (await packetsSent()) - before - mntrSelf;
  await Promise.all(clients.map((client) => client.close()));
  return {
    sessions: variant.sessions,
    lease: variant.lease,
    waiters,
    ops,
    ops_per_s: round(ops / seconds, 1),
    server_packets_sent_per_op: round(packets / ops, 2),
    handoff_p50_ms: round(percentile(handoffs, 50), 3),
  };
}

const results: Awaited<ReturnType<typeof run>>[] = [];
let index = 0;
for (let roundIndex = 0; roundIndex < rounds; roundIndex++) {
  for (const waiters of waiterCounts) {
    // Rotate the order each round: no variant always runs first.
    for (let offset = 0; offset < variants.length; offset++) {
      const variant = variants[(offset + roundIndex) % variants.length] as Variant;
      const result = await run(variant, waiters, index++);
      results.push(result);
      console.log(JSON.stringify({ round: roundIndex + 1, ...result }));
    }
  }
}
console.error(
  '| waiters | sessions | lease | packets/op | ops/s (median) | hand-off p50 ms (median) |',
);
console.error('|---|---|---|---|---|---|');
for (const waiters of waiterCounts) {
  for (const variant of variants) {
    const rows = results.filter(
      (row) =>
        row.waiters === waiters && row.sessions === variant.sessions && row.lease === variant.lease,
    );
    const median = (values: number[]) => round(percentile(values, 50), 3);
    console.error(
      `| ${waiters} | ${variant.sessions} | ${variant.lease} | ${median(rows.map((row) => row.server_packets_sent_per_op))} | ${median(rows.map((row) => row.ops_per_s))} | ${median(rows.map((row) => row.handoff_p50_ms))} |`,
    );
  }
}
