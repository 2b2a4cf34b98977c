/**
 * A fresh npm project outside the workspace that installs packed tarballs the way a user
 * installs from the registry, and runs smoke files in it from ESM and from CommonJS, on Node and
 * on the other runtimes of runtimes.mjs.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Creates `dir` with a package.json that depends on `install` (names of packed packages,
 * installed from their tarballs) and `registry` (name → range, from the registry), with every
 * packed `@zkrx/*` package overridden to its tarball, so that peers npm installs by itself
 * come from the tarballs too (they are not on the registry). Then `npm install`.
 *
 * @param {{
 *   dir: string,
 *   packs: { name: string, tarball: string }[],
 *   install: string[],
 *   registry?: Record<string, string>,
 *   npmArgs?: string[],
 *   env?: Record<string, string>,
 * }} options
 * @return {Promise<{ dir: string, ms: number }>}
 */
export async function installProject({ dir, packs, install, registry = {}, npmArgs = [], env }) {
  mkdirSync(dir, { recursive: true });
  const tarballOf = (name) => {
    const pack = packs.find((candidate) => candidate.name === name);
    if (!pack) throw new Error(`no tarball for ${name}`);
    return `file:${pack.tarball}`;
  };
  const manifest = {
    name: `zkrx-install-${basename(dir)}`,
    private: true,
    dependencies: {
      ...Object.fromEntries(install.map((name) => [name, tarballOf(name)])),
      ...registry,
    },
    overrides: Object.fromEntries(packs.map((pack) => [pack.name, tarballOf(pack.name)])),
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, ms: await npmInstall(dir, npmArgs, env) };
}

/**
 * `npm install` in `dir`, quietly, from npm's cache where it can; `env` on top of this process's
 * (a Node line's PATH: npm, and any build it runs, on that line).
 *
 * @return {Promise<number>} how long it took, in ms
 */
export async function npmInstall(dir, npmArgs = [], env = {}) {
  const started = performance.now();
  try {
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...npmArgs],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
    );
  } catch (error) {
    throw new Error(`npm install in ${dir} failed:\n${error.stderr || error.message}`);
  }
  return Math.round(performance.now() - started);
}

/** The package.json of an installed package. */
export function installedManifest(dir, name) {
  return JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8'));
}

/**
 * Puts `smokeFile` (an ES module whose default export is `async (load, env) => string`; `env` is
 * `{ connect, server, chroot, root, kind }` from main.mjs, as JSON in ZKRX_SMOKE_ENV: each run
 * has its own) in the project as `smoke.mjs`, with two entry files that run it: `entry.mjs`, an
 * ES module whose `load` is `import()`, and `entry.cjs`, a CommonJS module whose `load` is
 * `require()`. Every runtime runs the same two.
 */
export function prepareSmoke({ dir, smokeFile }) {
  copyFileSync(smokeFile, join(dir, 'smoke.mjs'));
  const env = 'JSON.parse(process.env.ZKRX_SMOKE_ENV)';
  writeFileSync(
    join(dir, 'entry.mjs'),
    `import smoke from './smoke.mjs';\n` +
      `console.log(await smoke((specifier) => import(specifier), ${env}));\n`,
  );
  writeFileSync(
    join(dir, 'entry.cjs'),
    `'use strict';\n` +
      `import('./smoke.mjs')\n` +
      `  .then(({ default: smoke }) => smoke(async (specifier) => require(specifier), ${env}))\n` +
      `  .then((result) => console.log(result), (error) => { console.error(error); process.exitCode = 1; });\n`,
  );
}

/** The entry files `prepareSmoke` writes: the module system, the file. */
export const smokeEntries = [
  ['ESM', 'entry.mjs'],
  ['CJS', 'entry.cjs'],
];

/**
 * Runs one entry file written by `prepareSmoke` on `runtime` (runtimes.mjs: a Node line, Bun,
 * Deno), in its own process with the project as its cwd, `smokeEnv` in ZKRX_SMOKE_ENV.
 *
 * @return {Promise<string>} what the run printed last
 */
export async function runEntry({ dir, runtime, entry, smokeEnv, timeoutMs = 120_000 }) {
  return runCommand({
    dir,
    command: runtime.command,
    args: runtime.args(entry),
    env: { ...runtime.env, ZKRX_SMOKE_ENV: JSON.stringify(smokeEnv) },
    timeoutMs,
    label: `${entry} on ${runtime.label} ${runtime.version}`,
  });
}

/**
 * At most `n` of the functions given run at once; the others wait their turn.
 *
 * @return {<T>(fn: () => Promise<T>) => Promise<T>}
 */
export function limiter(n) {
  let running = 0;
  const waiting = [];
  const next = () => {
    if (running >= n || waiting.length === 0) return;
    running += 1;
    const { fn, resolve, reject } = waiting.shift();
    fn()
      .then(resolve, reject)
      .finally(() => {
        running -= 1;
        next();
      });
  };
  return (fn) =>
    new Promise((resolve, reject) => {
      waiting.push({ fn, resolve, reject });
      next();
    });
}

/**
 * Runs node with `args` in `dir` — `runtime`'s (a Node line of runtimes.mjs), or this process's;
 * resolves its last line of output, rejects with its output.
 */
export async function runNode({
  dir,
  args,
  env = {},
  runtime,
  timeoutMs = 120_000,
  label = 'node',
}) {
  const command = runtime?.command ?? process.execPath;
  return runCommand({ dir, command, args, env: { ...runtime?.env, ...env }, timeoutMs, label });
}

/** Runs `command` in `dir`; resolves its last line of output, rejects with its output. */
export async function runCommand({ dir, command, args, env = {}, timeoutMs = 120_000, label }) {
  try {
    const { stdout } = await run(command, args, {
      cwd: dir,
      env: { ...process.env, ...env },
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout.trim().split('\n').at(-1) ?? '';
  } catch (error) {
    const why = error.killed ? `killed after ${timeoutMs} ms` : `exit code ${error.code}`;
    throw new Error(
      `${label} in ${dir} failed (${why}):\n${error.stdout ?? ''}\n${error.stderr ?? ''}`,
    );
  }
}
