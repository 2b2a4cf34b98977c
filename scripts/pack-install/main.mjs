#!/usr/bin/env node
/**
 * The pack-and-install test: packs what a release would publish, checks the packed manifests,
 * then installs each published package alone with npm in a fresh project under the system's
 * temp directory and runs its smoke from ESM and CommonJS against a test ZooKeeper, on every
 * Node line of scripts/runtimes.json (22, 24, 26) and, for the scenarios that list them, on Bun
 * and Deno (all from npm, runtimes.mjs). One install per scenario serves every runtime; the
 * runtimes of a scenario run at once (`--parallel`), each under its own chroot.
 *
 *   node scripts/pack-install/main.mjs [--only core,lock] [--keep] [--jobs 1] [--parallel 3]
 *                                      [--npm-arg=--ignore-scripts] [--runtimes bun,deno]
 *                                      [--node 22,24,26]
 *
 * `--runtimes` chooses the runtimes besides Node (`--runtimes none`: Node only); `--node` the
 * Node lines (majors). Needs a build (`pnpm build`), Java and ZooKeeper (scripts/bootstrap.sh)
 * and the npm registry.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import semver from 'semver';
import {
  installedManifest,
  installProject,
  limiter,
  prepareSmoke,
  runEntry,
  smokeEntries,
} from './npm-project.mjs';
import { packRelease } from './release-packs.mjs';
import { installNodeLines, installRuntimes, pins, runtimeVersions } from './runtimes.mjs';
import { scenarios } from './scenarios.mjs';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'npm-arg': { type: 'string', multiple: true, default: [] },
    jobs: { type: 'string', default: '1' },
    parallel: { type: 'string', default: '3' },
    runtimes: { type: 'string', default: 'bun,deno' },
    node: { type: 'string' },
  },
});

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s`;
const log = (line) => console.log(`[pack-install ${elapsed()}] ${line}`);

/** The rules a release's packed manifests must follow (see RELEASING.md). */
export function checkPackedManifests(packs) {
  const problems = [];
  const versions = new Set(packs.map((pack) => pack.version));
  if (versions.size !== 1) problems.push(`one fixed group, one version: got ${[...versions]}`);
  for (const pack of packs) {
    const { manifest } = pack;
    if (semver.lt(pack.version, '0.1.0')) {
      problems.push(`${pack.name}@${pack.version}: below the initial version 0.1.0`);
    }
    for (const field of ['repository', 'homepage', 'bugs', 'license']) {
      if (!manifest[field]) problems.push(`${pack.name}: no "${field}"`);
    }
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (range.startsWith('workspace:'))
          problems.push(`${pack.name} ${field} ${name}: ${range}`);
        const sibling = packs.find((candidate) => candidate.name === name);
        if (!sibling) continue;
        if (!semver.satisfies(sibling.version, range)) {
          problems.push(
            `${pack.name} ${field} ${name}@${range} is not satisfied by ${name}@${sibling.version} of the same release`,
          );
        }
      }
    }
  }
  return problems;
}

/**
 * What the packed builds carry from node_modules: tsdown's shims only. Anything else is a module
 * the bundler took in because the manifest does not name it (as `@zkrx/testing`'s lazy
 * `import('vitest')` would be without `neverBundle`), shipped as a private copy of someone else's
 * code.
 */
export function checkNothingBundled(packs) {
  const problems = [];
  for (const pack of packs) {
    const dist = join(pack.dir, 'dist');
    for (const file of readdirSync(dist, { recursive: true })) {
      if (!/\.[cm]?js$/.test(file)) continue;
      const text = readFileSync(join(dist, file), 'utf8');
      const bundled = [...text.matchAll(/^\/\/ (\S*node_modules\/\S+)$/gm)]
        .map(([, source]) => source)
        .find((source) => !/\/node_modules\/tsdown\/esm-shims\.js$/.test(source));
      if (bundled) problems.push(`${pack.name}: dist/${file} bundles ${bundled}`);
    }
  }
  return problems;
}

/** The README's "Runtimes" section names the versions the smokes run on (runtimes.json). */
export function checkRuntimesDocumented(readme) {
  const section = /^## Runtimes\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) return ['README.md has no "## Runtimes" section'];
  return [
    ...pins.node.lines.map((version) => ['Node', version]),
    ['Bun', runtimeVersions.bun],
    ['Deno', runtimeVersions.deno],
  ]
    .filter(([label, version]) => !section.includes(`${label} ${version}`))
    .map(([label, version]) => `README.md's "Runtimes" does not name ${label} ${version}`);
}

/**
 * The `engines` every package claims: exactly the Node lines CI proves, from the patch release
 * it runs on (`^22.23.5 || ^24.22.3 || ^26.12.1`), no other line.
 */
export const provenEngines = pins.node.lines.map((version) => `^${version}`).join(' || ');

/** Every packed manifest (and the workspace's) says `engines.node` is the proven lines. */
export function checkEngines(packs, rootManifest) {
  return [...packs.map((pack) => [pack.name, pack.manifest]), ['the workspace', rootManifest]]
    .filter(([, manifest]) => manifest.engines?.node !== provenEngines)
    .map(
      ([name, manifest]) =>
        `${name}: engines.node is ${manifest.engines?.node}, not ${provenEngines} (the lines CI proves, scripts/runtimes.json)`,
    );
}

const only = args.only?.split(',');
const chosen = scenarios.filter((scenario) => !only || only.includes(scenario.name));
if (chosen.length === 0) throw new Error(`no scenario named ${args.only}`);
const selectedRuntimes = args.runtimes === 'none' ? [] : args.runtimes.split(',');
for (const name of selectedRuntimes) {
  if (!(name in runtimeVersions)) throw new Error(`--runtimes: no runtime named ${name}`);
}
const nodeVersions = pins.node.lines.filter(
  (version) => !args.node || args.node.split(',').includes(version.split('.')[0]),
);
if (nodeVersions.length === 0) throw new Error(`--node ${args.node}: none of ${pins.node.lines}`);
/** The runtimes besides Node a scenario runs on in this run. */
const runtimesOf = (scenario) =>
  (scenario.runtimes ?? []).filter((name) => selectedRuntimes.includes(name));
const neededRuntimes = [...new Set(chosen.flatMap(runtimesOf))];

// Everything goes under one temporary directory, removed at the end unless kept or failed.
const base = mkdtempSync(join(tmpdir(), 'zkrx-pack-install-'));
// The Node lines (from the cache), Bun and Deno (npm) install while the release is packed;
// awaited before the first smoke.
const runtimesReady = Promise.all([
  installNodeLines(nodeVersions),
  installRuntimes({ dir: join(base, 'runtimes'), names: neededRuntimes }),
]);
runtimesReady.catch(() => {}); // awaited below; this only keeps an early failure from crashing
const packs = await packRelease({
  root,
  scratch: join(base, 'scratch'),
  out: join(base, 'packs'),
  log,
});
const problems = [
  ...checkPackedManifests(packs),
  ...checkNothingBundled(packs),
  ...checkRuntimesDocumented(readFileSync(join(root, 'README.md'), 'utf8')),
  ...checkEngines(packs, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))),
];
if (problems.length > 0) {
  console.error(`The release breaks its rules (RELEASING.md):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
log(`release ${packs[0].version}: ${packs.length} packages, @zkrx peer ranges satisfied`);

let runtimes;
let nodeLines;
try {
  [nodeLines, { runtimes }] = await runtimesReady;
} catch (error) {
  console.error(`[pack-install] installing the runtimes FAILED: ${error.message}`);
  log(`kept: ${base}`);
  process.exit(1);
}
log(
  `runtimes: ${[...nodeLines, ...Object.values(runtimes)]
    .map(
      (runtime) =>
        `${runtime.label === 'Bun' || runtime.label === 'Deno' ? runtime.label : 'Node'} ${runtime.version} (npm ${runtime.package})`,
    )
    .join(', ')}`,
);
/** At most `--parallel` runtimes run a scenario's smokes at once. */
const parallel = limiter(Math.max(1, Number(args.parallel)));

// The ZooKeeper the smokes use: the workspace's own @zkrx/testing build.
const { startZooKeeper } = await import(`${root}/packages/testing/dist/index.js`);
const { createClient } = await import(`${root}/packages/core/dist/index.js`);
const server = await startZooKeeper();
const admin = createClient({ connect: server.connectString });
await admin.connected();
log(`ZooKeeper on ${server.connectString}`);

const results = [];
let failed = false;

/** A chroot of the test server of its own: `connect` for clients, `server` and `chroot` for a proxy. */
async function chrootFor(name) {
  const chroot = `/zkrx-pack-install-${process.pid}-${name}`;
  await admin.promises.mkdirp(chroot);
  return { connect: `${server.connectString}${chroot}`, server: server.connectString, chroot };
}

/** Installs one scenario's project and runs its smoke (and what comes after). */
async function runScenario(scenario) {
  const dir = join(base, 'projects', scenario.name);
  if (scenario.project) {
    // A project made its own way (`nest new`, the native binding), which runs its own tests.
    const { ms, last } = await scenario.project({
      dir,
      packs,
      npmArgs: [...(scenario.npmArgs ?? []), ...args['npm-arg']],
      log: (line) => log(`${scenario.name}: ${line}`),
      nodeLines,
      runtimes: runtimesOf(scenario).map((name) => runtimes[name]),
      parallel,
      chrootFor: (name) => chrootFor(`${scenario.name}-${name}`),
    });
    log(`${scenario.name}: ${last} (${(ms / 1000).toFixed(1)} s)`);
    return ms;
  }
  const { ms } = await installProject({
    dir,
    packs,
    install: scenario.install,
    registry: scenario.registry,
    npmArgs: [...(scenario.npmArgs ?? []), ...args['npm-arg']],
  });
  for (const pack of packs) {
    let installed;
    try {
      installed = installedManifest(dir, pack.name).version;
    } catch {
      continue; // not needed by this package
    }
    if (installed !== pack.version) {
      throw new Error(
        `${pack.name}@${installed} installed instead of the tarball's ${pack.version}`,
      );
    }
  }
  log(`${scenario.name}: npm install ${(ms / 1000).toFixed(1)} s`);
  prepareSmoke({ dir, smokeFile: scenario.smoke });
  // The same two entry files on each runtime, one process each, ESM then CommonJS; the runtimes
  // at once, each under its own chroot of the test server.
  const runOn = async (runtime) => {
    const env = { ...(await chrootFor(`${scenario.name}-${runtime.name}`)), root: '/smoke' };
    for (const [kind, entry] of smokeEntries) {
      const last = await runEntry({ dir, runtime, entry, smokeEnv: { ...env, kind } });
      log(`${scenario.name}: ${runtime.label.padEnd(7)} ${kind}  ${last}`);
    }
    // What comes after runs on each Node line.
    if (scenario.after && nodeLines.includes(runtime)) {
      const { connect } = await chrootFor(`${scenario.name}-${runtime.name}-after`);
      const line = await scenario.after({ root, dir, connect, runtime });
      log(`${scenario.name}: ${runtime.label.padEnd(7)} ${line}`);
    }
  };
  const ran = await Promise.allSettled(
    [...nodeLines, ...runtimesOf(scenario).map((name) => runtimes[name])].map((runtime) =>
      parallel(() => runOn(runtime)),
    ),
  );
  const failures = ran.filter((result) => result.status === 'rejected');
  if (failures.length > 0)
    throw new Error(failures.map((result) => result.reason.message).join('\n'));
  return ms;
}

const queue = [...chosen];
const workers = Array.from({ length: Math.max(1, Number(args.jobs)) }, async () => {
  for (let scenario = queue.shift(); scenario; scenario = queue.shift()) {
    try {
      results.push({ scenario: scenario.name, ok: true, installMs: await runScenario(scenario) });
    } catch (error) {
      failed = true;
      results.push({ scenario: scenario.name, ok: false });
      console.error(`[pack-install] ${scenario.name} FAILED: ${error.message}`);
    }
  }
});
try {
  await Promise.all(workers);
} finally {
  await admin.close();
  await server.close();
  // The projects' node_modules are gigabytes of small files: removed by a process of their own
  // that outlives this one (minutes on a slow file system, with nothing left to wait for).
  if (!args.keep && !failed) {
    spawn('rm', ['-rf', base], { detached: true, stdio: 'ignore' }).unref();
    log(`removing ${base} in the background`);
  } else log(`kept: ${base} (packs/, projects/)`);
}

const passed = results.filter((result) => result.ok).map((result) => result.scenario);
log(`${passed.length}/${results.length} installed alone and ran: ${passed.join(', ')}`);
// Every scenario runs on every Node line.
for (const runtime of nodeLines) log(`on Node ${runtime.version}: ${passed.join(', ') || 'none'}`);
for (const runtime of Object.values(runtimes)) {
  const ran = chosen
    .filter(
      (scenario) => passed.includes(scenario.name) && runtimesOf(scenario).includes(runtime.name),
    )
    .map((scenario) => scenario.name);
  log(`on ${runtime.label} ${runtime.version}: ${ran.join(', ') || 'none'}`);
}
process.exit(failed ? 1 : 0);
