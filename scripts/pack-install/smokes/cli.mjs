/**
 * @zkrx/cli from its tarball, alone: the `zkrx` command as npx runs it (`--help`, `locks` showing
 * a lock held on the test server, a usage error's exit code, `dev-server` serving until Ctrl-C)
 * and `run` from the module system.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const zkrx = (...args) => exec('npx', ['--no-install', 'zkrx', ...args], { timeout: 60_000 });

export default async function smoke(load, { connect, root }) {
  const { run } = await load('@zkrx/cli');
  // @zkrx/cli depends on @zkrx/core and @zkrx/lock: npm installed them beside it.
  const { createClient } = await load('@zkrx/core');
  const { acquire } = await load('@zkrx/lock');

  const help = await zkrx('--help');
  if (!help.stdout.includes('zkrx locks <path>')) throw new Error(`zkrx --help:\n${help.stdout}`);
  // What the READMEs say (`npx zkrx` would ask the registry for a package named zkrx).
  const scoped = await exec('npx', ['--no-install', '@zkrx/cli', '--version'], { timeout: 60_000 });
  if (!/^\d+\.\d+\.\d+/.test(scoped.stdout)) throw new Error(`npx @zkrx/cli: ${scoped.stdout}`);
  const usage = await zkrx('frob').then(
    () => undefined,
    (error) => error,
  );
  if (usage?.code !== 2) throw new Error(`zkrx frob exited ${usage?.code}, not 2`);

  const client = createClient({ connect });
  const lease = await acquire(client, `${root}/cli`, { data: 'smoke-holder:1' });
  try {
    const { stdout } = await zkrx('locks', root, '--connect', connect);
    if (!/holds +exclusive +0x\w+ +smoke-holder:1 /.test(stdout)) {
      throw new Error(`zkrx locks does not show the holder:\n${stdout}`);
    }
    let out = '';
    const io = {
      stdout: { write: (text) => (out += text) },
      stderr: { write: () => {} },
      stdin: process.stdin,
      env: {},
      onInterrupt: () => () => {},
    };
    const code = await run(['locks', root, '--json', '--connect', connect], io);
    const holder = JSON.parse(out).locks[0]?.holders[0];
    if (code !== 0 || holder?.node !== lease.node) throw new Error(`run() gave ${code}:\n${out}`);
  } finally {
    await lease.release();
    await client.close();
  }
  const devServer = await devServerUntilCtrlC(load);
  return `@zkrx/cli: npx zkrx --help, npx @zkrx/cli --version, npx zkrx locks shows the holder, exit 2 on misuse, run() exit 0, ${devServer}`;
}

/**
 * `zkrx dev-server --port <p>` (the installed bin) in its own process group, as a terminal runs
 * it: it must answer `ruok` while nothing but the command keeps it up, then stop on Ctrl-C
 * (SIGINT to the group), exit 0 and remove its data. Not through npx: npm itself dies of the
 * SIGINT, before the command has stopped.
 */
async function devServerUntilCtrlC(load) {
  const { fourLetterWord } = await load('@zkrx/testing'); // a dependency of @zkrx/cli
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  const bin = join(process.cwd(), 'node_modules/.bin/zkrx');
  const child = spawn(bin, ['dev-server', '--port', String(port)], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const ready = await new Promise((resolve, reject) => {
      child.stdout.on('data', () => out.includes('Ctrl-C stops it.') && resolve(true));
      exited.then((code) => resolve(code === 0 ? false : reject(new Error(`exited ${code}`))));
    });
    if (!ready) throw new Error('it exited 0 right after saying it was ready');
    const answer = await fourLetterWord(`127.0.0.1:${port}`, 'ruok');
    if (answer !== 'imok') throw new Error(`ruok answered ${answer}`);
    process.kill(-child.pid, 'SIGINT');
    const code = await exited;
    const dir = /data in (\S+),/.exec(out)?.[1];
    if (code !== 0 || !out.includes('stopped') || !dir || existsSync(dir)) {
      throw new Error(`after Ctrl-C: exit ${code}, data ${dir} ${existsSync(dir ?? '')}`);
    }
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
    throw new Error(`zkrx dev-server: ${error.message}\n${out}`);
  }
  return 'zkrx dev-server served until Ctrl-C';
}
