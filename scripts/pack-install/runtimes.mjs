/**
 * The runtimes the smokes run on: the Node lines of scripts/runtimes.json (22, 24, 26: every
 * scenario, the official binaries from their npm packages, in the cache folder of
 * scripts/node-lines.sh) and, for the scenarios that list them, Bun and Deno — from their npm
 * packages, pinned in scripts/runtimes.json too, installed with npm into a folder of the
 * pack-install's temporary directory on every run (npm's cache makes it quick).
 *
 * Why npm packages in the temp directory, not devDependencies of the workspace: nothing on a
 * fresh machine (CI's next one) has Bun or Deno, and the npm registry is the one place both come
 * from here. The `bun` and `deno` packages pick the platform's binary from their optional
 * dependencies (`@oven/bun-linux-x64`, `@deno/linux-x64-glibc`, …) and their install scripts
 * only link or copy it (Bun's falls back to `npm install`, then the npm registry, for the
 * platform package — never another host). Kept out of the workspace, they cost nothing to a
 * `pnpm install` that does not run this test (~200 MB unpacked), need no pnpm build approval
 * for Bun's install script, and are installed exactly as a user installs them.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const scripts = new URL('..', import.meta.url).pathname;
/** scripts/runtimes.json: the pinned versions of every runtime. */
export const pins = JSON.parse(readFileSync(join(scripts, 'runtimes.json'), 'utf8'));

/**
 * @typedef {{
 *   name: string,
 *   label: string,
 *   package?: string,
 *   version: string,
 *   command: string,
 *   args: (entry: string) => string[],
 *   env?: Record<string, string>,
 * }} Runtime
 */

/** The pinned runtimes besides Node (scripts/runtimes.json; the README's "Runtimes" names them). */
export const runtimeVersions = { bun: pins.bun, deno: pins.deno };

/** The name of a Node line's runtime: `node22`. */
export const nodeName = (version) => `node${version.split('.')[0]}`;

/**
 * The Node lines, installed (from npm, into the cache, once) by scripts/node-lines.sh: each runs
 * an entry file with its own binary, and with its `bin` first on PATH, so that what a smoke
 * starts — `npx`, a `#!/usr/bin/env node` bin, npm and its builds (with that line's headers) —
 * runs on that line too.
 *
 * @param {string[]} versions
 * @return {Promise<Runtime[]>}
 */
export async function installNodeLines(versions) {
  return Promise.all(
    versions.map(async (version) => {
      const { stdout } = await run(
        'bash',
        [
          '-c',
          'source "$0/node-lines.sh" && install_node_line "$1" >&2 && node_home "$1"',
          scripts,
          version,
        ],
        { maxBuffer: 64 * 1024 * 1024 },
      ).catch((error) => {
        throw new Error(`installing Node ${version} failed:\n${error.stderr || error.message}`);
      });
      const home = stdout.trim();
      return {
        name: nodeName(version),
        label: `Node ${version.split('.')[0]}`,
        package: `node-${process.platform}-${process.arch}`,
        version,
        command: join(home, 'bin/node'),
        args: (entry) => [entry],
        env: { PATH: `${join(home, 'bin')}:${process.env.PATH}`, npm_config_nodedir: home },
      };
    }),
  );
}

/**
 * How each runtime runs an entry file; `command` is filled in by `installRuntimes`. The same
 * entry files as Node's, with no flag but Deno's `-A` (all permissions: net, read, env, sys,
 * run). The environment only keeps each run to itself: the runtimes' caches (Bun's transpiler
 * cache, Deno's DENO_DIR) go into `dir`, not the home directory, and Deno's update check (a
 * request to its own host, unreachable here) is off.
 */
const definitions = {
  bun: {
    label: 'Bun',
    args: (entry) => [entry],
    env: (dir) => ({ BUN_RUNTIME_TRANSPILER_CACHE_PATH: join(dir, 'bun-cache') }),
  },
  deno: {
    label: 'Deno',
    args: (entry) => ['run', '-A', entry],
    env: (dir) => ({ DENO_DIR: join(dir, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }),
  },
};

/**
 * Installs the named runtimes (`bun`, `deno`) from npm into `dir` and checks that each runs and
 * is the pinned version.
 *
 * @param {{ dir: string, names: string[] }} options
 * @return {Promise<{ runtimes: Record<string, Runtime> }>}
 */
export async function installRuntimes({ dir, names }) {
  for (const name of names) {
    if (!definitions[name]) throw new Error(`unknown runtime ${name} (known: bun, deno)`);
  }
  if (names.length === 0) return { runtimes: {} };
  mkdirSync(dir, { recursive: true });
  const manifest = {
    name: 'zkrx-pack-install-runtimes',
    private: true,
    dependencies: Object.fromEntries(names.map((name) => [name, runtimeVersions[name]])),
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  try {
    // Bun's install script puts its binary in place: run it even if npm's config says not to.
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
        '--ignore-scripts=false',
      ],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    throw new Error(`npm install ${names.join(' ')} in ${dir} failed:\n${error.stderr || error}`);
  }
  const runtimes = {};
  for (const name of names) {
    const command = join(dir, 'node_modules', '.bin', name);
    const env = definitions[name].env(dir);
    let stdout;
    try {
      ({ stdout } = await run(command, ['--version'], {
        env: { ...process.env, ...env },
        timeout: 60_000,
      }));
    } catch (error) {
      throw new Error(`${command} --version failed: ${error.stderr || error}`);
    }
    // `1.4.5` (bun), `deno 2.9.6 (stable, release, x86_64-unknown-linux-gnu)` + lines (deno).
    const version = /\d+\.\d+\.\d+\S*/.exec(stdout)?.[0];
    if (version !== runtimeVersions[name]) {
      throw new Error(`${name} --version says ${stdout.trim()}, not ${runtimeVersions[name]}`);
    }
    const { label, args } = definitions[name];
    runtimes[name] = { name, label, package: name, version, command, args, env };
  }
  return { runtimes };
}
