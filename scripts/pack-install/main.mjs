#!/usr/bin/env node
/**
 * The pack-and-install test: packs what a release would publish, checks the packed manifests,
 * then installs each published package alone with npm in a fresh project under the system's
 * temp directory and runs its smoke from ESM and CommonJS against a test ZooKeeper, on Node and,
 * for the scenarios that list them, on Bun and Deno (installed from npm, runtimes.mjs).
 *
 *   node scripts/pack-install/main.mjs [--only core,lock] [--keep] [--jobs 1]
 *                                      [--npm-arg=--ignore-scripts] [--runtimes bun,deno]
 *
 * `--runtimes` chooses the runtimes besides Node (`--runtimes none`: Node only).
 * Needs a build (`pnpm build`), Java and ZooKeeper (scripts/bootstrap.sh) and the npm registry.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import semver from 'semver';
import {
  installedManifest,
  installProject,
  prepareSmoke,
  runEntry,
  smokeEntries,
} from './npm-project.mjs';
import { packRelease } from './release-packs.mjs';
import { installRuntimes, node, runtimeVersions } from './runtimes.mjs';
import { scenarios } from './scenarios.mjs';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'npm-arg': { type: 'string', multiple: true, default: [] },
    jobs: { type: 'string', default: '1' },
    runtimes: { type: 'string', default: 'bun,deno' },
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

/** The README's "Runtimes" section names the versions the smokes run on (runtimes.mjs). */
export function checkRuntimesDocumented(readme) {
  const section = /^## Runtimes\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) return ['README.md has no "## Runtimes" section'];
  return Object.entries({ Bun: runtimeVersions.bun, Deno: runtimeVersions.deno })
    .filter(([label, version]) => !section.includes(`${label} ${version}`))
    .map(([label, version]) => `README.md's "Runtimes" does not name ${label} ${version}`);
}

const only = args.only?.split(',');
const chosen = scenarios.filter((scenario) => !only || only.includes(scenario.name));
if (chosen.length === 0) throw new Error(`no scenario named ${args.only}`);
const selectedRuntimes = args.runtimes === 'none' ? [] : args.runtimes.split(',');
for (const name of selectedRuntimes) {
  if (!(name in runtimeVersions)) throw new Error(`--runtimes: no runtime named ${name}`);
}
/** The runtimes besides Node a scenario runs on in this run. */
const runtimesOf = (scenario) =>
  (scenario.runtimes ?? []).filter((name) => selectedRuntimes.includes(name));
const neededRuntimes = [...new Set(chosen.flatMap(runtimesOf))];

// Everything goes under one temporary directory, removed at the end unless kept or failed.
const base = mkdtempSync(join(tmpdir(), 'zkrx-pack-install-'));
// Bun and Deno install (npm) while the release is packed; awaited before the first smoke.
const runtimesReady = installRuntimes({ dir: join(base, 'runtimes'), names: neededRuntimes });
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
];
if (problems.length > 0) {
  console.error(`The release breaks its rules (RELEASING.md):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
log(`release ${packs[0].version}: ${packs.length} packages, @zkrx peer ranges satisfied`);

let runtimes;
try {
  ({ runtimes } = await runtimesReady);
} catch (error) {
  console.error(`[pack-install] installing ${neededRuntimes.join(', ')} FAILED: ${error.message}`);
  log(`kept: ${base}`);
  process.exit(1);
}
log(
  `runtimes: Node ${node.version}${Object.values(runtimes)
    .map((runtime) => `, ${runtime.label} ${runtime.version} (npm ${runtime.package})`)
    .join('')}`,
);

// The ZooKeeper the smokes use: the workspace's own @zkrx/testing build.
const { startZooKeeper } = await import(`${root}/packages/testing/dist/index.js`);
const { createClient } = await import(`${root}/packages/core/dist/index.js`);
const server = await startZooKeeper();
const admin = createClient({ connect: server.connectString });
await admin.connected();
log(`ZooKeeper on ${server.connectString}`);

const results = [];
let failed = false;

/** Installs one scenario's project and runs its smoke (and what comes after). */
async function runScenario(scenario) {
  const dir = join(base, 'projects', scenario.name);
  if (scenario.project) {
    // A project made its own way (`nest new`), which runs its own tests.
    const { ms, last } = await scenario.project({
      dir,
      packs,
      npmArgs: [...(scenario.npmArgs ?? []), ...args['npm-arg']],
      log: (line) => log(`${scenario.name}: ${line}`),
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
  // Each scenario works under its own chroot of the test server.
  const chroot = `/zkrx-pack-install-${process.pid}-${scenario.name}`;
  await admin.promises.mkdirp(chroot);
  const connect = `${server.connectString}${chroot}`;
  // `connect` for clients; `server` and `chroot` for a smoke that puts a proxy in between.
  prepareSmoke({
    dir,
    smokeFile: scenario.smoke,
    env: { connect, server: server.connectString, chroot, root: '/smoke' },
  });
  // The same two entry files on each runtime, one process each, one after the other.
  for (const runtime of [node, ...runtimesOf(scenario).map((name) => runtimes[name])]) {
    for (const [kind, entry] of smokeEntries) {
      const last = await runEntry({ dir, runtime, entry });
      log(`${scenario.name}: ${runtime.label.padEnd(4)} ${kind}  ${last}`);
    }
  }
  if (scenario.after) log(`${scenario.name}: ${await scenario.after({ root, dir, connect })}`);
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
  if (!args.keep && !failed) rmSync(base, { recursive: true, force: true });
  else log(`kept: ${base} (packs/, projects/)`);
}

const passed = results.filter((result) => result.ok).map((result) => result.scenario);
log(`${passed.length}/${results.length} installed alone and ran: ${passed.join(', ')}`);
for (const runtime of Object.values(runtimes)) {
  const ran = chosen
    .filter(
      (scenario) => passed.includes(scenario.name) && runtimesOf(scenario).includes(runtime.name),
    )
    .map((scenario) => scenario.name);
  log(`also on ${runtime.label} ${runtime.version}: ${ran.join(', ') || 'none'}`);
}
process.exit(failed ? 1 : 0);
