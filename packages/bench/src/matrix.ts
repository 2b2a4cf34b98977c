/**
 * The whole matrix (what `pnpm bench` runs): an embedded ZooKeeper on tmpfs with the peers'
 * JVM options (or `--connect`), an untimed server warm-up, then every scenario and client count
 * in its own process (fresh sessions, fresh heap), progress on stderr, the table on stdout, the
 * JSON lines and the chart in files.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, release } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fourLetterWord, startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { chartSvg } from './chart';
import type { BenchIo } from './main';
import type { BenchOptions, ScenarioName } from './options';
import type { ResultLine } from './single-run';
import { markdownTable } from './table';

export interface MatrixEntry {
  readonly scenario: ScenarioName;
  readonly clients: number;
  readonly ops: number;
}

/** The runs of `pnpm bench`: the peers' scenarios and op counts, then herd and memory. */
export const MATRIX: readonly MatrixEntry[] = [
  { scenario: 'floor-create-delete', clients: 1, ops: 2000 },
  { scenario: 'floor-getchildren', clients: 1, ops: 4000 },
  { scenario: 'mutex-uncontended', clients: 1, ops: 2000 },
  { scenario: 'mutex-contended', clients: 8, ops: 2000 },
  { scenario: 'mutex-contended', clients: 32, ops: 2000 },
  { scenario: 'rwlock-mixed', clients: 1, ops: 1500 },
  { scenario: 'rwlock-mixed', clients: 8, ops: 1500 },
  { scenario: 'rwlock-mixed', clients: 32, ops: 1500 },
  { scenario: 'semaphore', clients: 1, ops: 1000 },
  { scenario: 'semaphore', clients: 8, ops: 1000 },
  { scenario: 'semaphore', clients: 32, ops: 1000 },
  { scenario: 'leader-failover', clients: 8, ops: 200 },
  { scenario: 'leader-failover', clients: 32, ops: 200 },
  { scenario: 'herd', clients: 10, ops: 30 },
  { scenario: 'herd', clients: 50, ops: 30 },
  { scenario: 'herd', clients: 100, ops: 30 },
  { scenario: 'memory', clients: 2, ops: 10_000 },
];

/** The JVM options of the embedded server: the peers' zk-start.sh (JIT and GC as in production). */
export const SERVER_JVM_OPTIONS = ['-Xms256m', '-Xmx1g'] as const;

/** The matrix entries the options select (scenarios, client count, op count, scale). */
export function selectMatrix(options: BenchOptions): MatrixEntry[] {
  const picked = MATRIX.filter(
    (entry) => options.scenarios.length === 0 || options.scenarios.includes(entry.scenario),
  );
  const seen = new Set<string>();
  const selected: MatrixEntry[] = [];
  for (const entry of picked) {
    const clients = options.clients ?? entry.clients;
    const ops = options.ops ?? Math.max(10, Math.floor(entry.ops * options.scale));
    const key = `${entry.scenario}/${clients}`;
    if (seen.has(key)) continue;
    seen.add(key);
    selected.push({ scenario: entry.scenario, clients, ops });
  }
  return selected;
}

interface ChildOutcome {
  readonly code: number;
  readonly line: ResultLine | undefined;
  readonly stderr: string;
}

const cliPath = fileURLToPath(import.meta.url);

/** Runs one entry as `node --expose-gc cli.js --connect ... --scenario ...` (a fresh process). */
function runChild(
  connect: string,
  entry: MatrixEntry,
  options: BenchOptions,
  io: BenchIo,
  quiet = false,
): Promise<ChildOutcome> {
  const args = [
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
    '--stall-s',
    String(options.stallSeconds),
  ];
  if (options.warmup !== undefined) args.push('--warmup', String(options.warmup));
  if (options.warmupHoldMs !== undefined) {
    args.push('--warmup-hold-ms', String(options.warmupHoldMs));
  }
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (!quiet) io.stderr(chunk);
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
    impl: 'zkrx',
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
  const entries = selectMatrix(options);
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
  const stopServer = () => void server?.stop();
  process.once('SIGINT', stopServer);
  process.once('SIGTERM', stopServer);
  try {
    const setup = await describeSetup(connect, server);
    for (const line of setup) io.stderr(`${line.slice(2)}\n`);
    io.stderr('server warm-up (discarded): 3000 create+delete, a 500-op contended mutex\n');
    for (const warm of [
      { scenario: 'floor-create-delete', clients: 1, ops: 3000 },
      { scenario: 'mutex-contended', clients: 8, ops: 500 },
    ] as const) {
      const outcome = await runChild(connect, warm, { ...options, warmup: undefined }, io, true);
      if (outcome.code !== 0) io.stderr(`(server warm-up run failed: exit ${outcome.code})\n`);
    }
    const lines: ResultLine[] = [];
    let failed = false;
    for (const [index, entry] of entries.entries()) {
      const t0 = performance.now();
      io.stderr(
        `\n[${index + 1}/${entries.length}] ${entry.scenario} C=${entry.clients} N=${entry.ops}\n`,
      );
      const outcome = await runChild(connect, entry, options, io);
      const line = outcome.line ?? failedLine(entry, outcome);
      if (!outcome.line) failed = true;
      lines.push(line);
      const took = ((performance.now() - t0) / 1000).toFixed(1);
      io.stderr(
        outcome.line
          ? `  -> ${line.ops_per_s} ops/s, p50 ${line.p50_ms} ms, p99 ${line.p99_ms} ms, ${line.server_packets_sent_per_op} pkts/op (${took} s)\n`
          : `  -> FAILED ${String(line.error)} (${took} s)\n`,
      );
    }
    const total = (performance.now() - started) / 1000;
    const jsonFile = options.json ?? join(resultsDir(), `zkrx-${stamp()}.jsonl`);
    const chartFile = options.chart ?? `${jsonFile.replace(/\.jsonl?$/, '')}.svg`;
    mkdirSync(dirname(resolve(jsonFile)), { recursive: true });
    writeFileSync(jsonFile, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    mkdirSync(dirname(resolve(chartFile)), { recursive: true });
    const command = `zkrx bench ${process.argv.slice(2).join(' ')}`.trim();
    writeFileSync(
      chartFile,
      chartSvg(lines, [
        `${command}: ${lines.length} runs in ${total.toFixed(0)} s`,
        ...setup.map((line) => line.slice(2)),
      ]),
    );
    io.stdout(
      [
        `zkrx bench: ${lines.length} runs in ${total.toFixed(0)} s`,
        ...setup,
        '',
        markdownTable(lines),
        '',
      ].join('\n'),
    );
    io.stderr(`\nJSON lines: ${jsonFile}\nchart:      ${chartFile}\n`);
    return failed ? 1 : 0;
  } finally {
    process.off('SIGINT', stopServer);
    process.off('SIGTERM', stopServer);
    await server?.stop();
  }
}
