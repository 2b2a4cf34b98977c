/**
 * The whole matrix (what `pnpm bench` runs): an embedded ZooKeeper on tmpfs with the peers'
 * JVM options (or `--connect`), an untimed server warm-up, then every scenario and client count
 * in its own process (fresh sessions, fresh heap), progress on stderr, the table on stdout, the
 * JSON lines and the chart in files.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fourLetterWord, startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { chartSvg } from './chart';
import type { BenchIo } from './io';
import type { BenchOptions, PeerName, ScenarioName } from './options';
import { findPeersDir, javaPeerCommand, PEERS_OF } from './peers';
import { bestRounds, ratioTable, transportRatios } from './rounds';
import type { ResultLine } from './single-run';
import { markdownTable } from './table';

export interface MatrixEntry {
  readonly scenario: ScenarioName;
  readonly clients: number;
  readonly ops: number;
  /** Who runs it: zkrx, or one of its peers (PEERS_OF). */
  readonly impl: 'zkrx' | PeerName;
  /** zkrx's variant of a lock scenario: `--form`, `--one-client` (its row's impl says which). */
  readonly args?: readonly string[];
}

const observed = ['--form', 'observable'];
const signalRead = ['--form', 'signal'];
const oneClient = ['--one-client'];

/** The matrix's scenarios, client counts and op counts (zkrx's; selectMatrix adds the peers). */
export const MATRIX: readonly Omit<MatrixEntry, 'impl'>[] = [
  { scenario: 'floor-create-delete', clients: 1, ops: 2000 },
  { scenario: 'floor-getchildren', clients: 1, ops: 4000 },
  { scenario: 'pipelined-get', clients: 1, ops: 50_000 },
  { scenario: 'mutex-uncontended', clients: 1, ops: 2000 },
  { scenario: 'mutex-uncontended', clients: 1, ops: 2000, args: observed },
  { scenario: 'mutex-contended', clients: 8, ops: 2000 },
  { scenario: 'mutex-contended', clients: 32, ops: 2000 },
  // The forms users run: the observable, and acquire with its signal read (@Locked, zkLock).
  { scenario: 'mutex-contended', clients: 8, ops: 2000, args: observed },
  { scenario: 'mutex-contended', clients: 32, ops: 2000, args: observed },
  { scenario: 'mutex-contended', clients: 8, ops: 2000, args: signalRead },
  { scenario: 'mutex-contended', clients: 32, ops: 2000, args: signalRead },
  // One service, many requests on one lock: every worker on one client.
  { scenario: 'mutex-contended', clients: 8, ops: 2000, args: oneClient },
  { scenario: 'mutex-contended', clients: 32, ops: 2000, args: oneClient },
  { scenario: 'mutex-contended', clients: 32, ops: 2000, args: [...observed, ...oneClient] },
  { scenario: 'rwlock-mixed', clients: 1, ops: 1500 },
  { scenario: 'rwlock-mixed', clients: 8, ops: 1500 },
  { scenario: 'rwlock-mixed', clients: 32, ops: 1500 },
  { scenario: 'semaphore', clients: 1, ops: 1000 },
  { scenario: 'semaphore', clients: 8, ops: 1000 },
  { scenario: 'semaphore', clients: 32, ops: 1000 },
  { scenario: 'semaphore', clients: 32, ops: 1000, args: observed },
  { scenario: 'leader-failover', clients: 8, ops: 200 },
  { scenario: 'leader-failover', clients: 32, ops: 200 },
  { scenario: 'leader-failover', clients: 500, ops: 50 },
  { scenario: 'herd', clients: 10, ops: 30 },
  { scenario: 'herd', clients: 50, ops: 30 },
  { scenario: 'herd', clients: 100, ops: 30 },
  { scenario: 'memory', clients: 2, ops: 10_000 },
];

/** The JVM options of the embedded server: the peers' zk-start.sh (JIT and GC as in production). */
export const SERVER_JVM_OPTIONS = ['-Xms256m', '-Xmx1g'] as const;

/**
 * The matrix entries the options select (scenarios, client count, op count, scale), each
 * scenario's peers (`--peers`) right after zkrx's run of it.
 */
export function selectMatrix(options: BenchOptions): MatrixEntry[] {
  const picked = MATRIX.filter(
    (entry) => options.scenarios.length === 0 || options.scenarios.includes(entry.scenario),
  );
  const seen = new Set<string>();
  const selected: MatrixEntry[] = [];
  // The fleet scenarios are not in the default matrix (their sizes are the command line's).
  if (options.scenarios.includes('fleet-scale')) {
    picked.push({ scenario: 'fleet-scale', clients: 4, ops: 200 });
  }
  if (options.scenarios.includes('fleet-members')) {
    picked.push({ scenario: 'fleet-members', clients: 50, ops: 1 });
  }
  if (options.scenarios.includes('fleet-rollout')) {
    picked.push({ scenario: 'fleet-rollout', clients: 20, ops: 2_000 });
  }
  if (options.scenarios.includes('fleet-boot')) {
    picked.push({ scenario: 'fleet-boot', clients: 20, ops: 2_000 });
  }
  for (const entry of picked) {
    const clients = options.clients ?? entry.clients;
    const ops = options.ops ?? Math.max(10, Math.floor(entry.ops * options.scale));
    const key = `${entry.scenario}/${clients}/${entry.args?.join(' ') ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    selected.push({
      scenario: entry.scenario,
      clients,
      ops,
      impl: 'zkrx',
      ...(entry.args ? { args: entry.args } : {}),
    });
    // The peers run each scenario once, beside zkrx's default form.
    if (entry.args) continue;
    for (const peer of PEERS_OF[entry.scenario] ?? []) {
      if (options.peers === undefined || options.peers.includes(peer)) {
        selected.push({ scenario: entry.scenario, clients, ops, impl: peer });
      }
    }
  }
  return selected;
}

interface ChildOutcome {
  readonly code: number;
  readonly line: ResultLine | undefined;
  readonly stderr: string;
}

const cliPath = fileURLToPath(import.meta.url);

/**
 * The command of one entry: `node --expose-gc cli.js --connect ... --scenario ... [--impl ...]`,
 * or the Java peer's (`peersDir`), each a fresh process.
 */
export function childCommand(
  connect: string,
  entry: MatrixEntry,
  options: BenchOptions,
  peersDir: string | undefined,
): string[] {
  const common = ['--stall-s', String(options.stallSeconds)];
  if (options.warmup !== undefined) common.push('--warmup', String(options.warmup));
  if (options.warmupHoldMs !== undefined) {
    common.push('--warmup-hold-ms', String(options.warmupHoldMs));
  }
  if (entry.impl === 'java') {
    if (!peersDir) throw new Error('no shared/peers/CuratorBench.java (--peers-dir)');
    return javaPeerCommand(peersDir, { connect, ...entry }, common);
  }
  const args = [
    process.execPath,
    '--expose-gc',
    cliPath,
    '--connect',
    connect,
    '--scenario',
    entry.scenario,
    '--clients',
    String(entry.clients),
    '--ops',
    String(entry.ops),
    ...common,
  ];
  if (entry.impl !== 'zkrx') args.push('--impl', entry.impl);
  if (entry.scenario === 'fleet-scale' || entry.scenario === 'fleet-rollout') {
    if (options.processes !== undefined) args.push('--processes', String(options.processes));
    if (options.nameBytes !== undefined) args.push('--name-bytes', String(options.nameBytes));
  }
  if (entry.scenario === 'fleet-boot' && options.bootSeconds !== undefined) {
    args.push('--boot-s', String(options.bootSeconds));
  }
  if (entry.scenario === 'fleet-scale' && options.fleetSteps) {
    args.push('--fleet-steps', options.fleetSteps.join(','));
  }
  if (entry.args) args.push(...entry.args);
  if (entry.scenario === 'pipelined-get') {
    args.push('--in-flight', String(options.inFlight));
    if (options.dataBytes !== undefined) args.push('--data-bytes', String(options.dataBytes));
  }
  return args;
}

/** Runs one entry in a fresh process (see {@link childCommand}). */
function runChild(
  connect: string,
  entry: MatrixEntry,
  options: BenchOptions,
  io: BenchIo,
  quiet = false,
  peersDir?: string,
): Promise<ChildOutcome> {
  const [program, ...args] = childCommand(connect, entry, options, peersDir) as [
    string,
    ...string[],
  ];
  return new Promise((resolvePromise) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (!quiet) io.stderr(chunk);
    });
    child.on('error', (error) => {
      stderr += `${error.message}\n`;
    });
    child.on('close', (code) => {
      const text = stdout.trim().split('\n').pop() ?? '';
      let line: ResultLine | undefined;
      if (code === 0 && text.startsWith('{')) line = JSON.parse(text) as ResultLine;
      resolvePromise({ code: code ?? 1, line, stderr });
    });
  });
}

function failedLine(entry: MatrixEntry, outcome: ChildOutcome): ResultLine {
  const why =
    outcome.stderr
      .split('\n')
      .find((text) => /^(STALLED|EXCLUSION VIOLATED)|Exception|Error/.test(text)) ?? 'see the log';
  return {
    impl: entry.impl === 'java' ? 'zk-floor' : entry.impl,
    scenario: entry.scenario,
    clients: entry.clients,
    ops: entry.ops,
    error: `exit ${outcome.code}: ${why}`,
  };
}

/** What the table's header says about the machine and the server. */
async function describeSetup(
  connect: string,
  server: ZooKeeperServer | undefined,
): Promise<string[]> {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const javaVersion = (java.stderr || java.stdout || 'unknown').split('\n')[0]?.trim();
  let zookeeper = 'unknown';
  try {
    const srvr = await fourLetterWord(connect.split(',')[0] as string, 'srvr');
    // Debian's build reports `3.8.0-${mvngit.commit.id}, built on ...`: keep the version.
    zookeeper =
      /^Zookeeper version: ([^,\n]+)/m
        .exec(srvr)?.[1]
        ?.trim()
        .replace(/-\$\{.*\}$/, '') ?? zookeeper;
  } catch {
    // leave it unknown
  }
  const tmpfs = server?.dataDir.startsWith('/dev/shm/') === true;
  return [
    `- machine: ${availableParallelism()} cores, ${process.platform} ${release()}`,
    `- node ${process.version}; ${javaVersion}`,
    `- ZooKeeper ${zookeeper}, ` +
      (server
        ? `embedded, standalone, tickTime=2000, JVM ${SERVER_JVM_OPTIONS.join(' ')}, dataDir ${
            tmpfs
              ? `on tmpfs (${server.dataDir}): txn-log fsyncs cost ~nothing`
              : `${server.dataDir} (no /dev/shm here: NOT on tmpfs)`
          }`
        : `at ${connect} (--connect)`),
  ];
}

function stamp(): string {
  const now = new Date();
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
}

/** The default directory of the JSON lines and the chart: `bench-results/` of this package. */
function resultsDir(): string {
  return resolve(dirname(cliPath), '..', 'bench-results');
}

/**
 * Runs the selected matrix; resolves the exit status (1 when any run failed).
 */
export async function runMatrix(options: BenchOptions, io: BenchIo): Promise<number> {
  let entries = selectMatrix(options);
  const notes: string[] = [];
  let peersDir: string | undefined;
  if (entries.some((entry) => entry.impl === 'java')) {
    peersDir = options.peersDir ?? findPeersDir(dirname(cliPath));
    const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
    const why = !peersDir
      ? 'no shared/peers/CuratorBench.java above this package (--peers-dir)'
      : java.error
        ? `no java (${java.error.message})`
        : undefined;
    if (why) {
      notes.push(`- the Java peer is skipped: ${why}`);
      entries = entries.filter((entry) => entry.impl !== 'java');
    }
  }
  const started = performance.now();
  let server: ZooKeeperServer | undefined;
  let connect = options.connect;
  if (!connect) {
    io.stderr(
      `starting ZooKeeper (JVM ${SERVER_JVM_OPTIONS.join(' ')}, data dir on /dev/shm)...\n`,
    );
    server = await startZooKeeper({
      tmpfs: true,
      tickTime: 2000,
      jvmOptions: SERVER_JVM_OPTIONS,
    });
    connect = server.connectString;
  }
  const stopServer = () => void server?.close();
  process.once('SIGINT', stopServer);
  process.once('SIGTERM', stopServer);
  try {
    const setup = await describeSetup(connect, server);
    for (const line of setup) io.stderr(`${line.slice(2)}\n`);
    for (const line of notes) io.stderr(`${line.slice(2)}\n`);
    // The peers' untimed server warm-up (scaled with --scale, for a quick look).
    const warmups = [
      { scenario: 'floor-create-delete', clients: 1, ops: 3000, impl: 'zkrx' },
      { scenario: 'mutex-contended', clients: 8, ops: 500, impl: 'zkrx' },
    ].map((entry) => ({
      ...entry,
      ops: Math.max(10, Math.floor(entry.ops * options.scale)),
    })) as MatrixEntry[];
    io.stderr(
      `server warm-up (discarded): ${warmups[0]?.ops} create+delete, a ${warmups[1]?.ops}-op contended mutex\n`,
    );
    for (const warm of warmups) {
      const outcome = await runChild(connect, warm, { ...options, warmup: undefined }, io, true);
      if (outcome.code !== 0) io.stderr(`(server warm-up run failed: exit ${outcome.code})\n`);
    }
    const lines: ResultLine[] = [];
    const loads: string[] = [];
    let failed = false;
    const total = entries.length * options.rounds;
    for (let roundIndex = 1; roundIndex <= options.rounds; roundIndex++) {
      const loadBefore = loadavg()[0] as number;
      for (const [index, entry] of entries.entries()) {
        const t0 = performance.now();
        const load = loadavg()[0] as number;
        const count = (roundIndex - 1) * entries.length + index + 1;
        io.stderr(
          `\n[${count}/${total}]${options.rounds > 1 ? ` round ${roundIndex}` : ''} ${entry.scenario} C=${entry.clients} N=${entry.ops}${entry.impl === 'zkrx' ? '' : ` (${entry.impl})`}${entry.args ? ` ${entry.args.join(' ')}` : ''}, load ${load.toFixed(2)}\n`,
        );
        const outcome = await runChild(connect, entry, options, io, false, peersDir);
        const line: ResultLine = {
          ...(outcome.line ?? failedLine(entry, outcome)),
          round: roundIndex,
          load_1m: Math.round(load * 100) / 100,
        };
        if (!outcome.line) failed = true;
        lines.push(line);
        const took = ((performance.now() - t0) / 1000).toFixed(1);
        io.stderr(
          outcome.line
            ? `  -> ${line.ops_per_s} ops/s, p50 ${line.p50_ms} ms, p99 ${line.p99_ms} ms, ${line.server_packets_sent_per_op} pkts/op (${took} s)\n`
            : `  -> FAILED ${String(line.error)} (${took} s)\n`,
        );
      }
      loads.push(
        `round ${roundIndex}: ${loadBefore.toFixed(2)} → ${(loadavg()[0] as number).toFixed(2)}`,
      );
    }
    const seconds = (performance.now() - started) / 1000;
    const jsonFile = options.json ?? join(resultsDir(), `zkrx-${stamp()}.jsonl`);
    const chartFile = options.chart ?? `${jsonFile.replace(/\.jsonl?$/, '')}.svg`;
    mkdirSync(dirname(resolve(jsonFile)), { recursive: true });
    writeFileSync(jsonFile, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    const shown = options.rounds > 1 ? bestRounds(lines) : lines;
    mkdirSync(dirname(resolve(chartFile)), { recursive: true });
    const command = `zkrx bench ${process.argv.slice(2).join(' ')}`.trim();
    writeFileSync(
      chartFile,
      chartSvg(shown, [
        `${command}: ${lines.length} runs in ${seconds.toFixed(0)} s`,
        ...setup.map((line) => line.slice(2)),
      ]),
    );
    const ratios = transportRatios(shown);
    io.stdout(
      [
        `zkrx bench: ${lines.length} runs in ${seconds.toFixed(0)} s` +
          (options.rounds > 1
            ? `, ${options.rounds} interleaved rounds; each row is its best round`
            : ''),
        ...setup,
        ...notes,
        `- load (1-min average, as \`uptime\`), ${loads.join('; ')}`,
        '',
        markdownTable(shown),
        '',
        ...(ratios.length > 0 ? [ratioTable(ratios), ''] : []),
      ].join('\n'),
    );
    io.stderr(`\nJSON lines: ${jsonFile}\nchart:      ${chartFile}\n`);
    return failed ? 1 : 0;
  } finally {
    process.off('SIGINT', stopServer);
    process.off('SIGTERM', stopServer);
    await server?.close();
  }
}
