/**
 * @zkrx/cli from its tarball, alone: the `zkrx` command as npx runs it (`--help`, `locks` showing
 * a lock held on the test server, a usage error's exit code) and `run` from the module system.
 * The command is the same whichever module system the smoke is loaded from: npx runs in the ESM
 * run of each runtime only (npm's start-up is most of this scenario's time).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const zkrx = (...args) => exec('npx', ['--no-install', 'zkrx', ...args], { timeout: 60_000 });

export default async function smoke(load, { connect, root, kind }) {
  const { run } = await load('@zkrx/cli');
  // @zkrx/cli depends on @zkrx/core and @zkrx/lock: npm installed them beside it.
  const { createClient } = await load('@zkrx/core');
  const { acquire } = await load('@zkrx/lock');

  const withNpx = kind === 'ESM';
  if (withNpx) await npxRuns();

  const client = createClient({ connect });
  const lease = await acquire(client, `${root}/cli`, { data: 'smoke-holder:1' });
  try {
    if (withNpx) {
      const { stdout } = await zkrx('locks', root, '--connect', connect);
      if (!/holds +exclusive +0x\w+ +smoke-holder:1 /.test(stdout)) {
        throw new Error(`zkrx locks does not show the holder:\n${stdout}`);
      }
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
  return withNpx
    ? `@zkrx/cli: npx zkrx --help, npx @zkrx/cli --version, npx zkrx locks shows the holder, exit 2 on misuse, run() exit 0`
    : '@zkrx/cli: run() exit 0';
}

/** `npx zkrx --help`, `npx @zkrx/cli --version` and a usage error's exit code. */
async function npxRuns() {
  // The runtime's own Node first on PATH: npx, and the command's `#!/usr/bin/env node`, run on it.
  const node = await exec('node', ['--version']);
  if (node.stdout.trim() !== process.version) {
    throw new Error(`node on PATH is ${node.stdout.trim()}, the smoke runs on ${process.version}`);
  }
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
}
