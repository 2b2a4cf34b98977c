/**
 * What the pack-and-install test installs: each published package alone in its own fresh npm
 * project (its @zkrx peers come from the tarballs through `overrides`, everything else from the
 * registry), then its smoke from ESM and from CommonJS, on every Node line and on the runtimes it
 * lists (`runtimes`: Bun and Deno, same entry files, runtimes.mjs); `after` runs on every Node
 * line. Add a scenario here to test another install (other npm flags, another peer major,
 * another smoke).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { nativeProject } from './native.mjs';
import { nestNewProject } from './nest-new.mjs';
import { runNode } from './npm-project.mjs';
import { typesProject } from './types.mjs';

const smoke = (name) => new URL(`./smokes/${name}.mjs`, import.meta.url).pathname;

/**
 * The runtimes besides Node a scenario's smoke also runs on (the README's "Runtimes" lists what
 * they cover). Not `cli`: its smoke runs the `zkrx` command through npx, which is Node whatever
 * runs the smoke.
 */
const bunAndDeno = ['bun', 'deno'];

/** The Nest majors @zkrx/nestjs supports, with the versions of the optional peers for each. */
const nestMajors = {
  11: {
    '@nestjs/common': '^11.0.0',
    '@nestjs/core': '^11.0.0',
    '@nestjs/platform-express': '^11.0.0',
    '@nestjs/schedule': '^6.0.0',
    '@nestjs/terminus': '^11.0.0',
    '@nestjs/config': '^4.0.0',
  },
  12: {
    '@nestjs/common': '^12.0.0',
    '@nestjs/core': '^12.0.0',
    '@nestjs/platform-express': '^12.0.0',
    '@nestjs/schedule': '^12.0.0',
    '@nestjs/terminus': '^12.0.0',
    '@nestjs/config': '^12.0.0',
  },
};

/**
 * `zkrx dev-server --port <p>` (the project's installed bin) in its own process group, as a
 * terminal runs it: it must answer `ruok` while nothing but the command keeps it up, then stop
 * on Ctrl-C (SIGINT to the group), exit 0 and remove its data. Not through npx: npm itself dies
 * of the SIGINT, before the command has stopped.
 */
async function devServerUntilCtrlC({ root, dir, runtime }) {
  const { fourLetterWord } = await import(`${root}/packages/testing/dist/index.js`);
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  const bin = join(dir, 'node_modules/.bin/zkrx');
  const child = spawn(bin, ['dev-server', '--port', String(port)], {
    cwd: dir,
    env: { ...process.env, ...runtime.env }, // `#!/usr/bin/env node`: the line's node
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
    const data = /data in (\S+),/.exec(out)?.[1];
    if (code !== 0 || !out.includes('stopped') || !data || existsSync(data)) {
      throw new Error(`after Ctrl-C: exit ${code}, data ${data} ${existsSync(data ?? '')}`);
    }
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
    throw new Error(`zkrx dev-server: ${error.message}\n${out}`);
  }
  return 'zkrx dev-server (the installed bin) served until Ctrl-C, then stopped';
}

/**
 * The example NestJS app (examples/nestjs-app, its CommonJS build) run in the project: three
 * instances on the test server doing the three jobs (a lock per order, billing once per tick,
 * tenants spread), the leader closed and restarted.
 */
async function runNestExampleApp({ root, dir, connect, runtime }) {
  const built = join(root, 'examples/nestjs-app/dist');
  if (!existsSync(join(built, 'main.js'))) throw new Error(`${built} is not built`);
  const app = `app-${runtime.name}`;
  cpSync(built, join(dir, app), { recursive: true });
  const last = await runNode({
    dir,
    runtime,
    args: [`${app}/main.js`],
    env: { ZK_CONNECT: connect, DEMO_TICKS: '1', TENANT_SYNC_EVERY_MS: '100' },
    label: `examples/nestjs-app on ${runtime.label}`,
  });
  return `examples/nestjs-app: ${last}`;
}

/**
 * @typedef {{
 *   name: string,
 *   install: string[],
 *   registry?: Record<string, string>,
 *   npmArgs?: string[],
 *   smoke: string,
 *   runtimes?: ('bun' | 'deno')[],
 *   after?: (context: { root: string, dir: string, connect: string, runtime: object }) => Promise<string>,
 *   project?: (context: { dir: string, packs: object[], npmArgs: string[], log: (line: string) => void, nodeLines: object[], runtimes: object[], parallel: Function, chrootFor: (name: string) => Promise<{ connect: string }> }) => Promise<{ ms: number, last: string }>,
 * }} Scenario
 * @type {Scenario[]}
 */
export const scenarios = [
  { name: 'core', install: ['@zkrx/core'], smoke: smoke('core'), runtimes: bunAndDeno },
  { name: 'lock', install: ['@zkrx/lock'], smoke: smoke('lock'), runtimes: bunAndDeno },
  { name: 'rwlock', install: ['@zkrx/rwlock'], smoke: smoke('rwlock'), runtimes: bunAndDeno },
  { name: 'leader', install: ['@zkrx/leader'], smoke: smoke('leader'), runtimes: bunAndDeno },
  // Two members share items, one leaves.
  { name: 'fleet', install: ['@zkrx/fleet'], smoke: smoke('fleet'), runtimes: bunAndDeno },
  { name: 'express', install: ['@zkrx/express'], smoke: smoke('express'), runtimes: bunAndDeno },
  // Its page and files are read from the package; its live stream over Node's http.
  { name: 'console', install: ['@zkrx/console'], smoke: smoke('console') },
  ...Object.entries(nestMajors).map(([major, registry]) => ({
    name: `nestjs-nest${major}`,
    // The optional peers the smoke and the example use (@Locked alone: nestjs-locked-only);
    // @zkrx/testing for the example's fault proxy.
    install: ['@zkrx/nestjs', '@zkrx/leader', '@zkrx/fleet', '@zkrx/testing'],
    registry,
    smoke: smoke('nestjs'),
    runtimes: bunAndDeno,
    after: runNestExampleApp, // on Node
  })),
  // @Locked alone: @zkrx/nestjs with @zkrx/core and @zkrx/lock, none of the optional peers.
  {
    name: 'nestjs-locked-only',
    install: ['@zkrx/nestjs', '@zkrx/core', '@zkrx/lock'],
    registry: {
      '@nestjs/common': '^11.0.0',
      '@nestjs/core': '^11.0.0',
      'reflect-metadata': '^0.2.0',
      rxjs: '^7.8.0',
    },
    smoke: smoke('nestjs-locked-only'),
  },
  // A fresh `nest new` project (Nest 12: ES modules, Vitest; Nest 11: CommonJS, Jest): the
  // README's snippet, unit tests without ZooKeeper, e2e tests on the runner's global setup.
  { name: 'nest-new-12', project: nestNewProject(12) },
  { name: 'nest-new-11', project: nestNewProject(11) },
  // @zkrx/core/native beside the stock zookeeper binding, compiled by npm on each Node line
  // where it builds; the ZkError naming the default transport elsewhere (Node 26, Bun, Deno).
  { name: 'native', project: nativeProject, runtimes: bunAndDeno },
  // Every package's types, from TypeScript 5 (the oldest the README promises) to 7, ESM and
  // CommonJS, skipLibCheck false, with the README's snippets.
  { name: 'types', project: typesProject },
  { name: 'testing', install: ['@zkrx/testing'], smoke: smoke('testing'), runtimes: bunAndDeno },
  // The zkrx command alone: `npx zkrx --help`, `npx zkrx locks` on the test server, `run()`;
  // then `zkrx dev-server` in its own process until Ctrl-C.
  { name: 'cli', install: ['@zkrx/cli'], smoke: smoke('cli'), after: devServerUntilCtrlC },
  {
    name: 'lock-ignore-scripts',
    install: ['@zkrx/lock', '@zkrx/testing'],
    npmArgs: ['--ignore-scripts'],
    smoke: smoke('lock-through-proxy'),
    runtimes: bunAndDeno,
  },
  // Every exported class of every package keeps its name in both builds (the bundler can
  // rename them), every entry of every package loaded.
  {
    name: 'class-names',
    install: [
      '@zkrx/core',
      '@zkrx/lock',
      '@zkrx/rwlock',
      '@zkrx/leader',
      '@zkrx/fleet',
      '@zkrx/testing',
      '@zkrx/express',
      '@zkrx/nestjs',
      '@zkrx/cli',
    ],
    registry: {
      '@nestjs/common': '^11.0.0',
      '@nestjs/core': '^11.0.0',
      '@nestjs/terminus': '^11.0.0',
      'reflect-metadata': '^0.2.0',
      express: '^5.0.0',
    },
    smoke: smoke('class-names'),
  },
  {
    name: 'mixed-builds',
    install: ['@zkrx/lock', '@zkrx/rwlock', '@zkrx/leader'],
    smoke: smoke('mixed-builds'),
    runtimes: bunAndDeno,
  },
];
