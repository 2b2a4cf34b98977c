/**
 * What a membership change costs a work partitioner: the time until the fleet has converged
 * again and the items moved, @zkrx/fleet's `partition` against kazoo's `SetPartitioner`, for a
 * member joining (3 → 4) and one leaving gracefully (4 → 3), with 12 and 120 items. Both run
 * against the same ZooKeeper, alternating, one round of each at a time.
 *
 * Every member has its own client, connected before the clock starts. The clock starts when the
 * change starts (the joining member subscribes / creates its SetPartitioner; the leaving member
 * unsubscribes / calls `finish()`) and stops once every live member owns its share and the
 * shares split the items exactly (zkrx: and each member's assignment lists the new membership;
 * kazoo: every member is ACQUIRED). `moved`: items whose owner changed; `minimum`: what any
 * balanced outcome must move (the joiner's quota, the leaver's items); `interrupted`: items whose
 * owner stopped working on them (zkrx: signals aborted; kazoo: items released by `release_set`,
 * which every member does on every change). The kazoo side is `python/set_partitioner.py` on
 * Debian's python3-kazoo (2.8); `--time-boundary` is its `time_boundary` (default 30 s in kazoo:
 * how long the party must be stable before allocating).
 *
 *   node packages/bench/dist/tools/fleet-rebalance.js [--connect H:P] [--items 12,120]
 *     [--rounds 5] [--impl zkrx,kazoo] [--time-boundary 1] [--python /usr/bin/python3]
 *
 * Prints one JSON line per change (stdout) and a summary of medians (stderr).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createClient, type ZkClient } from '@zkrx/core';
import { type Assignment, partition } from '@zkrx/fleet';
import { startZooKeeper } from '@zkrx/testing';
import type { Subscription } from 'rxjs';
import { percentile, round } from '../stats';
import { toolArgs } from './tool-args';

const args = toolArgs(
  `usage: node packages/bench/dist/tools/fleet-rebalance.js [--connect H:P] [--items 12,120]
  [--rounds 5] [--impl zkrx,kazoo] [--time-boundary 1] [--python /usr/bin/python3]

What a membership change (3 -> 4 members, 4 -> 3) costs @zkrx/fleet's partition against kazoo's
SetPartitioner: time to converge, items moved. Without --connect it starts its own ZooKeeper.`,
  {
    connect: '',
    items: '12,120',
    rounds: '5',
    impl: 'zkrx,kazoo',
    'time-boundary': '1',
    python: '/usr/bin/python3',
  },
);
const timeBoundary = String(args.seconds('time-boundary'));

interface Line {
  impl: 'zkrx' | 'kazoo';
  items: number;
  round: number;
  change: 'join' | 'leave';
  members: string;
  convergeMs: number;
  moved: number;
  minimum: number;
  interrupted: number;
  timeBoundaryS?: number;
  load1?: number;
}

const names = (count: number) =>
  Array.from({ length: count }, (_, index) => `item-${String(index).padStart(3, '0')}`);

class Member {
  latest: Assignment | undefined;
  interrupted = 0;
  private subscription: Subscription | undefined;

  constructor(
    readonly id: string,
    readonly client: ZkClient,
    private readonly changed: () => void,
  ) {}

  join(path: string, items: readonly string[]): void {
    this.subscription = partition(this.client, path, items, { id: this.id }).subscribe({
      next: (assignment) => {
        this.interrupted += assignment.removed.length;
        this.latest = assignment;
        this.changed();
      },
      error: (error: unknown) => {
        console.error(`${this.id}:`, error);
        process.exit(1);
      },
    });
  }

  leave(): void {
    this.interrupted += this.latest?.items.length ?? 0;
    this.latest = undefined;
    this.subscription?.unsubscribe();
  }
}

function converged(live: readonly Member[], items: readonly string[]): boolean {
  const seen = new Set<string>();
  let total = 0;
  for (const member of live) {
    const latest = member.latest;
    if (!latest) return false;
    for (const item of latest.items) seen.add(item);
    total += latest.items.length;
  }
  if (total !== items.length || seen.size !== items.length) return false;
  const low = Math.floor(items.length / live.length);
  return live.every((member) => {
    const count = member.latest?.items.length ?? 0;
    return count === low || count === low + 1;
  });
}

function ownersOf(live: readonly Member[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const member of live)
    for (const item of member.latest?.items ?? []) owners.set(item, member.id);
  return owners;
}

async function zkrxRound(connect: string, count: number, roundNumber: number): Promise<Line[]> {
  const items = names(count);
  const path = `/bench-fleet-${randomUUID().slice(0, 12)}`;
  let wake: (() => void) | undefined;
  const changed = () => wake?.();
  const members: Member[] = [];
  for (let index = 0; index < 4; index++) {
    const client = createClient({ connect, sessionTimeoutMs: 10_000 });
    await client.connected();
    members.push(new Member(`member-${index}`, client, changed));
  }
  const until = (live: readonly Member[]) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('zkrx did not converge in 120 s')), 120_000);
      wake = () => {
        if (!converged(live, items)) return;
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
      wake();
    });
  const change = async (
    live: readonly Member[],
    how: 'join' | 'leave',
    label: string,
    act: () => void,
  ): Promise<Line> => {
    // Every member's items before (the leaver's included).
    const before = ownersOf(members);
    const interruptedBefore = members.reduce((sum, member) => sum + member.interrupted, 0);
    const load1 = loadavg()[0] as number;
    const started = performance.now();
    act();
    await until(live);
    const convergeMs = performance.now() - started;
    const after = ownersOf(live);
    const moved = [...before].filter(([item, owner]) => after.get(item) !== owner).length;
    const interrupted =
      members.reduce((sum, member) => sum + member.interrupted, 0) - interruptedBefore;
    return {
      impl: 'zkrx',
      items: count,
      round: roundNumber,
      change: how,
      members: label,
      convergeMs: round(convergeMs, 1),
      moved,
      minimum: 0,
      interrupted,
      load1: round(load1, 2),
    };
  };
  try {
    const first = members.slice(0, 3);
    for (const member of first) member.join(path, items);
    await until(first);
    const newcomer = members[3] as Member;
    const joined = await change([...first, newcomer], 'join', '3->4', () =>
      newcomer.join(path, items),
    );
    joined.minimum = Math.floor(count / 4);
    const leaver = members[1] as Member;
    const leaving = leaver.latest?.items.length ?? 0;
    const remaining = members.filter((member) => member !== leaver);
    const left = await change(remaining, 'leave', '4->3', () => leaver.leave());
    left.minimum = leaving;
    for (const member of remaining) member.leave();
    return [joined, left];
  } finally {
    await Promise.all(members.map((member) => member.client.close()));
  }
}

function kazooRound(connect: string, count: number, roundNumber: number): Promise<Line[]> {
  const script = fileURLToPath(new URL('../../python/set_partitioner.py', import.meta.url));
  const load1 = round(loadavg()[0] as number, 2);
  return new Promise((resolve, reject) => {
    const child = spawn(args.text('python'), [script, connect, String(count), '1', timeBoundary], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`set_partitioner.py exited ${code}`));
      resolve(
        out
          .trim()
          .split('\n')
          .map((line) => ({ ...(JSON.parse(line) as Line), round: roundNumber, load1 })),
      );
    });
  });
}

const counts = args.counts('items', 1);
const impls = args.list('impl', ['zkrx', 'kazoo'] as const);
const rounds = args.count('rounds', 1);
const server = args.text('connect') ? undefined : await startZooKeeper();
const connect = args.text('connect') || (server?.connectString as string);
const lines: Line[] = [];
console.error(
  `fleet-rebalance: ${connect}, items ${counts.join(', ')}, ${rounds} rounds, ${impls.join(' vs ')}, kazoo time_boundary ${timeBoundary} s`,
);
try {
  for (let roundNumber = 1; roundNumber <= rounds; roundNumber++) {
    for (const count of counts) {
      for (const impl of impls) {
        const found =
          impl === 'zkrx'
            ? await zkrxRound(connect, count, roundNumber)
            : await kazooRound(connect, count, roundNumber);
        for (const line of found) {
          lines.push(line);
          console.log(JSON.stringify(line));
        }
      }
    }
  }
} finally {
  await server?.close();
}

for (const impl of impls) {
  for (const count of counts) {
    for (const how of ['join', 'leave'] as const) {
      const found = lines.filter(
        (line) => line.impl === impl && line.items === count && line.change === how,
      );
      if (found.length === 0) continue;
      const median = (values: number[]) => round(percentile(values, 50), 1);
      console.error(
        `${impl.padEnd(5)} ${String(count).padStart(3)} items ${how.padEnd(5)}: converge p50 ${median(found.map((line) => line.convergeMs))} ms (min ${Math.min(...found.map((line) => line.convergeMs))}, max ${Math.max(...found.map((line) => line.convergeMs))}), moved p50 ${median(found.map((line) => line.moved))} (minimum ${found[0]?.minimum}), interrupted p50 ${median(found.map((line) => line.interrupted))}`,
      );
    }
  }
}
