/**
 * Integration tests that no server outlives its owner: a SIGKILLed or exiting child
 * process, and watchdogs ending with normal stop and restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../test/process-alive';
import { startZooKeeper } from './server';

/** Pids of the watchdog shells that guard `javaPid` (Linux: read from /proc). */
function watchdogsOf(javaPid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.includes('zkrx-watchdog') && args.includes(String(javaPid)))
        found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

describe.runIf(existsSync('/proc/self/cmdline'))('no server outlives its owner', () => {
  let workDir: string;
  let childScript: string;

  beforeAll(async () => {
    // The child runs this package's source: bundle a small entry that starts a server.
    workDir = mkdtempSync(join(tmpdir(), 'zkrx-reaper-test-'));
    const entry = join(workDir, 'child.ts');
    const server = fileURLToPath(new URL('./server.ts', import.meta.url));
    writeFileSync(
      entry,
      [
        `import { startZooKeeper } from ${JSON.stringify(server)};`,
        'const server = await startZooKeeper();',
        "process.stdout.write(JSON.stringify({ pid: server.pid, dir: server.dir }) + '\\n');",
        "if (process.argv[2] === 'exit') process.exit(0); // without stop()",
        'setInterval(() => {}, 1000); // until killed',
      ].join('\n'),
    );
    childScript = join(workDir, 'child.mjs');
    await build({
      input: entry,
      platform: 'node',
      logLevel: 'silent',
      output: { file: childScript, format: 'esm' },
    });
  });
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  // Whatever a failed assertion leaves behind: the children, their servers, their dirs.
  const leftovers: { child: ChildProcess; server?: { pid: number; dir: string } }[] = [];
  afterEach(() => {
    for (const { child, server } of leftovers.splice(0)) {
      child.kill('SIGKILL');
      if (server && isAlive(server.pid)) process.kill(server.pid, 'SIGKILL');
      if (server) rmSync(server.dir, { recursive: true, force: true });
    }
  });

  /** Runs the child until it printed its server's pid and dir. */
  async function childWithServer(mode: 'exit' | 'hang') {
    const child = spawn(process.execPath, [childScript, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const leftover: (typeof leftovers)[number] = { child };
    leftovers.push(leftover);
    let output = '';
    const server = await new Promise<{ pid: number; dir: string }>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('\n')) resolve(JSON.parse(output.split('\n')[0]!));
      });
      child.on('exit', (code) => {
        if (!output.includes('\n')) reject(new Error(`child exited with ${code} before starting`));
      });
    });
    leftover.server = server;
    return { child, server };
  }

  it('a SIGKILLed owner: the watchdog kills the server and removes its dir', async () => {
    const { child, server } = await childWithServer('hang');
    expect(isAlive(server.pid)).toBe(true);
    expect(watchdogsOf(server.pid)).toHaveLength(1);
    child.kill('SIGKILL');
    const tookMs = await until(() => !isAlive(server.pid), 5_000);
    await until(() => !existsSync(server.dir), 2_000);
    await until(() => watchdogsOf(server.pid).length === 0, 2_000);
    console.info(`server gone ${tookMs} ms after its owner was SIGKILLed`);
  });

  it("an owner that exits without stop(): the 'exit' hook kills the server at once", async () => {
    const { child, server } = await childWithServer('exit');
    await new Promise((resolve) => child.once('exit', resolve));
    // SIGKILL was sent synchronously on exit; well under the watchdog's 1 s poll.
    await until(() => !isAlive(server.pid), 500);
    expect(existsSync(server.dir)).toBe(false);
  });

  it('a normal stop() ends the watchdog too; restart() hands over to a new one', async () => {
    const server = await startZooKeeper();
    try {
      const firstPid = server.pid;
      expect(watchdogsOf(firstPid)).toHaveLength(1);
      await server.restart();
      // SIGKILLed: gone once the kernel has run it down (a moment on a busy machine).
      await until(() => watchdogsOf(firstPid).length === 0, 10_000);
      expect(watchdogsOf(server.pid)).toHaveLength(1);
      await sleep(1_200); // one watchdog poll: it must not have removed the live server's dir
      expect(existsSync(server.dataDir)).toBe(true);
      expect(await server.fourLetterWord('ruok')).toBe('imok');
      const secondPid = server.pid;
      await server.close();
      await until(() => watchdogsOf(secondPid).length === 0, 10_000);
    } finally {
      await server.close();
    }
  });
});
