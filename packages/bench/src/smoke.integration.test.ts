/**
 * The harness's smoke test: every scenario with a tiny N through the CLI entry against the run's
 * ZooKeeper, each JSON line's keys checked; and the self-tests: a broken lock must end the run
 * with exit 2, a lock held for ever with exit 3 and a dump of the lock znodes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@zkrx/core';
import { testZooKeeper } from '@zkrx/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from './main';
import { findPeersDir, javaPeerCommand } from './peers';

/** The peers' keys, in the peers' order: every line starts with them. */
const KEYS = [
  'impl',
  'scenario',
  'clients',
  'ops',
  'seconds',
  'ops_per_s',
  'p50_ms',
  'p99_ms',
  'server_packets_sent_per_op',
];

let connect = '';

beforeAll(async () => {
  connect = (await testZooKeeper()).connectString;
});

async function bench(args: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(['--connect', connect, ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const runs: readonly [string, readonly string[], readonly string[]][] = [
  ['floor-create-delete', ['--ops', '20'], []],
  ['floor-getchildren', ['--ops', '20'], []],
  [
    'pipelined-get',
    ['--ops', '300', '--in-flight', '16'],
    [
      'client_cpu_us_per_op',
      'in_flight',
      'ops_per_read',
      'ops_per_write',
      'event_loop_utilization',
    ],
  ],
  ['mutex-uncontended', ['--ops', '20'], []],
  ['mutex-contended', ['--clients', '4', '--ops', '40'], ['handoff_p50_ms', 'handoff_p99_ms']],
  [
    'rwlock-mixed',
    ['--clients', '4', '--ops', '40'],
    ['read_p50_ms', 'write_p50_ms', 'max_concurrent_readers'],
  ],
  ['semaphore', ['--clients', '6', '--ops', '30'], ['max_concurrent_holders']],
  ['leader-failover', ['--clients', '3', '--ops', '5'], []],
  ['herd', ['--clients', '5', '--ops', '3'], ['waiters', 'drain_packets_per_release']],
  [
    'memory',
    ['--ops', '200'],
    ['heap_bytes_per_waiter', 'rss_bytes_per_waiter', 'enqueue_packets_per_waiter'],
  ],
  [
    'fleet-scale',
    ['--members', '3', '--items', '12', '--fleet-steps', 'cold,join,leave,expire'],
    ['cold_balanced_ms', 'watches', 'join_moved', 'join_minimum', 'leave_ms', 'expire_ms'],
  ],
  ['fleet-members', ['--members', '5'], ['cold_ms', 'watches', 'join_ms', 'join_packets']],
  [
    'fleet-rollout',
    ['--members', '3', '--items', '100'],
    ['steps_settled', 'settle_ms_max', 'unowned_item_seconds_total', 'both_sets'],
  ],
  [
    'fleet-boot',
    ['--members', '3', '--items', '30', '--boot-s', '2'],
    ['balanced_after_up_ms', 'all_owned_after_up_ms', 'packets_per_item'],
  ],
];

describe('every scenario, tiny N, through the CLI entry', () => {
  it.each(runs)('%s prints one JSON line with the peers keys', async (scenario, args, extra) => {
    const { code, stdout, stderr } = await bench(['--scenario', scenario, ...args]);
    expect(code, stderr).toBe(0);
    const printed = stdout.split('\n').filter(Boolean);
    expect(printed).toHaveLength(1);
    const line = JSON.parse(printed[0] as string) as Record<string, unknown>;
    expect(Object.keys(line).slice(0, KEYS.length)).toEqual(KEYS);
    expect(line).toMatchObject({ impl: 'zkrx', scenario });
    for (const key of KEYS.slice(2)) {
      expect(Number.isFinite(line[key]), key).toBe(true);
      expect(line[key] as number, key).toBeGreaterThanOrEqual(0);
    }
    expect(line.server_packets_sent_per_op as number).toBeGreaterThan(0);
    for (const key of extra) expect(line, key).toHaveProperty(key);
    if (scenario === 'semaphore') expect(line.max_concurrent_holders).toBeLessThanOrEqual(4);
    if (scenario === 'fleet-scale') expect(line.join_moved).toBe(line.join_minimum);
  });

  it.each([
    ['floor-create-delete', ['--ops', '20']],
    ['floor-getchildren', ['--ops', '20']],
    ['pipelined-get', ['--ops', '300', '--in-flight', '16']],
  ])('%s runs on node-zookeeper-client (--impl)', async (scenario, args) => {
    const { code, stdout, stderr } = await bench([
      '--scenario',
      scenario,
      '--impl',
      'node-zookeeper-client',
      ...args,
    ]);
    expect(code, stderr).toBe(0);
    const line = JSON.parse(stdout) as Record<string, unknown>;
    expect(Object.keys(line).slice(0, KEYS.length)).toEqual(KEYS);
    expect(line).toMatchObject({ impl: 'node-zookeeper-client', scenario });
    expect(line.server_packets_sent_per_op as number).toBeGreaterThan(0);
    expect(line.client_cpu_us_per_op as number).toBeGreaterThan(0);
  });

  it('left no node behind', async () => {
    const admin = createClient({ connect });
    try {
      await admin.connected();
      const left = (await admin.promises.children('/')).filter((name) =>
        name.startsWith('bench-zkrx-'),
      );
      expect(left).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

describe('the invariant checks fail on a broken lock (exit 2)', () => {
  it.each([
    ['mutex-contended', ['--clients', '4', '--ops', '40']],
    ['rwlock-mixed', ['--clients', '4', '--ops', '40']],
    ['semaphore', ['--clients', '8', '--ops', '40']],
  ] as const)('%s', async (scenario, args) => {
    const { code, stdout, stderr } = await bench([
      '--scenario',
      scenario,
      ...args,
      '--self-test-broken',
    ]);
    expect(code, stderr).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^EXCLUSION VIOLATED: /m);
  });
});

describe('the stall watchdog (exit 3)', () => {
  it('fires when a lock is held for ever, and dumps the lock znodes', async () => {
    const { code, stdout, stderr } = await bench([
      '--scenario',
      'mutex-contended',
      '--clients',
      '2',
      '--ops',
      '20',
      '--stall-s',
      '1',
      '--self-test-stall',
    ]);
    expect(code, stderr).toBe(3);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^STALLED: no operation completed for 1 s/m);
    // The dump: the lock path and its queue (the blocker first, then the stuck workers).
    expect(stderr).toMatch(/^ {2}\/bench-zkrx-mutex-contended-[0-9a-f]{8}\/lock: \[.*lock-\d{10}/m);
  });
});

const builtCli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const peersDir = findPeersDir(fileURLToPath(new URL('.', import.meta.url)));
const hasJava = spawnSync('java', ['-version']).status === 0;

describe('the Java peer (shared/peers/CuratorBench.java), as the matrix runs it', () => {
  it.skipIf(!peersDir || !hasJava)('prints the floor JSON line', () => {
    const [program, ...args] = javaPeerCommand(peersDir as string, {
      connect,
      scenario: 'floor-create-delete',
      clients: 1,
      ops: 20,
    }) as [string, ...string[]];
    const run = spawnSync(program, args, { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const line = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    expect(Object.keys(line).slice(0, KEYS.length)).toEqual(KEYS);
    expect(line).toMatchObject({ impl: 'zk-floor', scenario: 'floor-create-delete' });
  });
});

describe('interleaved rounds with a peer (the built CLI)', () => {
  it.skipIf(!existsSync(builtCli))('keeps every round, shows the best and the ratios', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zkrx-bench-smoke-'));
    try {
      const json = join(dir, 'rounds.jsonl');
      const run = spawnSync(
        process.execPath,
        [
          builtCli,
          '--connect',
          connect,
          '--scenario',
          'pipelined-get',
          '--ops',
          '200',
          '--in-flight',
          '8',
          '--rounds',
          '2',
          '--scale',
          '0.01',
          '--json',
          json,
        ],
        { encoding: 'utf8', timeout: 120_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const lines = readFileSync(json, 'utf8')
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      expect(lines.map((line) => [line.round, line.impl])).toEqual([
        [1, 'zkrx'],
        [1, 'node-zookeeper-client'],
        [1, 'zkrx-unbatched'],
        [2, 'zkrx'],
        [2, 'node-zookeeper-client'],
        [2, 'zkrx-unbatched'],
      ]);
      expect(run.stdout).toContain('2 interleaved rounds; each row is its best round');
      expect(run.stdout).toMatch(/load \(1-min average, as `uptime`\), round 1: /);
      expect(run.stdout).toMatch(/\| pipelined-get \| node-zookeeper-client \| [\d.]+× \|/);
      expect(run.stdout).toMatch(/\| pipelined-get \| zkrx-unbatched \| [\d.]+× \|/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the built CLI (node dist/cli.js), as run-peers.sh runs it', () => {
  it.skipIf(!existsSync(builtCli))('prints exactly one JSON line on stdout', () => {
    const run = spawnSync(
      process.execPath,
      [
        builtCli,
        '--connect',
        connect,
        '--scenario',
        'mutex-uncontended',
        '--clients',
        '1',
        '--ops',
        '20',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const printed = run.stdout.split('\n').filter(Boolean);
    expect(printed).toHaveLength(1);
    expect(Object.keys(JSON.parse(printed[0] as string)).slice(0, KEYS.length)).toEqual(KEYS);
    expect(run.stderr).toContain('[mutex-uncontended C=1]');
  });
});
