/**
 * Fresh `nest new` projects (npm) with zkrx from the packed tarballs, one per Nest major: Nest
 * 12's (ES modules, Vitest: what `nest new` makes today) and Nest 11's (CommonJS, Jest). Each
 * gets the root README's NestJS snippet as its code (its files as they are, beside the services
 * they inject; in the CommonJS one, relative imports without `.js`, as the README says), a unit
 * test on `@zkrx/nestjs/testing` (no ZooKeeper) and an e2e test booting the README's AppModule
 * on `@zkrx/testing`'s global setup for the project's runner (a real server it starts), run with
 * the project's own build and runner.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { npmInstall, runCommand } from './npm-project.mjs';

const run = promisify(execFile);
const template = new URL('./nest-new/', import.meta.url).pathname;
const readme = new URL('../../README.md', import.meta.url).pathname;

/**
 * The files of the root README's NestJS snippet (its first `ts` block after `**NestJS**`), each
 * starting at its `// <name>.ts` line: name → text.
 *
 * @return {Map<string, string>}
 */
export function readmeNestFiles(text) {
  const after = text.slice(text.indexOf('**NestJS**'));
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(after)?.[1];
  if (!block) throw new Error('README.md: no ```ts block after **NestJS**');
  const files = new Map();
  let current;
  for (const line of block.split('\n')) {
    const name = /^\/\/ ([\w.-]+\.ts)\b/.exec(line)?.[1];
    if (name) {
      current = name;
      files.set(name, '');
    }
    if (!current) throw new Error(`README.md's NestJS block starts before a // <name>.ts line`);
    files.set(current, `${files.get(current)}${line}\n`);
  }
  return files;
}

/** Rewrites relative imports `from './x.js'` as `from './x'`: what a CommonJS Jest project needs. */
export function withoutJsExtensions(text) {
  return text.replace(/(from '\.{1,2}\/[^']*?)\.js'/g, "$1'");
}

/**
 * What differs between the majors: the @nestjs/cli that makes the project, the
 * @nestjs/schedule that works there, and its test runner (Nest 12: ES modules and Vitest;
 * Nest 11: CommonJS and Jest, which cannot load @nestjs/schedule 12, ES modules only).
 */
const majors = {
  12: {
    cli: '@nestjs/cli@12',
    schedule: '^12.0.0',
    esm: true,
    e2eConfig(dir) {
      const file = join(dir, 'vitest.config.e2e.ts');
      const config = readFileSync(file, 'utf8');
      const include = "include: ['**/*.e2e-spec.ts'],";
      if (!config.includes(include)) throw new Error(`${file}: no ${include}\n${config}`);
      writeFileSync(
        file,
        config.replace(
          include,
          `${include} globalSetup: ['@zkrx/testing/vitest-global-setup'], setupFiles: ['./test/zk-connect.ts'],`,
        ),
      );
    },
    // testZooKeeper() finds the project's vitest with no dependency declared on it.
    tests: ['test/inject.e2e-spec.ts'],
    unit: ['vitest', 'run'],
    e2e: ['vitest', 'run', '--config', './vitest.config.e2e.ts'],
    runner: 'vitest',
  },
  11: {
    cli: '@nestjs/cli@11',
    schedule: '^6.0.0',
    esm: false,
    e2eConfig(dir) {
      const file = join(dir, 'test/jest-e2e.json');
      const e2e = JSON.parse(readFileSync(file, 'utf8'));
      e2e.globalSetup = '@zkrx/testing/jest-global-setup';
      e2e.globalTeardown = '@zkrx/testing/jest-global-teardown';
      e2e.setupFiles = ['<rootDir>/zk-connect.ts'];
      writeFileSync(file, `${JSON.stringify(e2e, null, 2)}\n`);
    },
    tests: [],
    unit: ['jest', '--ci', '--silent'],
    e2e: ['jest', '--ci', '--silent', '--config', './test/jest-e2e.json'],
    runner: 'jest',
  },
};

/**
 * The scenario of one Nest major: makes the project in `dir` with that major's `nest new`, adds
 * zkrx and the README's files, runs its build, unit and e2e tests.
 *
 * @param {11 | 12} major
 */
export function nestNewProject(major) {
  const nest = majors[major];
  return async ({ dir, packs, npmArgs = [], log, nodeLines, parallel }) => {
    const started = performance.now();
    const parent = join(dir, '..');
    mkdirSync(parent, { recursive: true });
    const name = `app${major}`;
    try {
      await run(
        'npx',
        ['-y', nest.cli, 'new', name, '--package-manager', 'npm', '--skip-git', '--skip-install'],
        { cwd: parent, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      );
    } catch (error) {
      throw new Error(`nest new failed:\n${error.stderr || error.message}`);
    }
    cpSync(join(parent, name), dir, { recursive: true });
    rmSync(join(parent, name), { recursive: true, force: true });
    log(`nest new (${nest.cli}): ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // zkrx from the tarballs (every @zkrx package overridden to its tarball), what the code uses.
    const tarball = (name) => `file:${packs.find((pack) => pack.name === name).tarball}`;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if ((manifest.type === 'module') !== nest.esm) {
      throw new Error(`${nest.cli} made a project of "type": ${manifest.type}`);
    }
    for (const name of ['@zkrx/nestjs', '@zkrx/core', '@zkrx/lock', '@zkrx/leader']) {
      manifest.dependencies[name] = tarball(name);
    }
    manifest.dependencies['@nestjs/schedule'] = nest.schedule;
    manifest.devDependencies['@zkrx/testing'] = tarball('@zkrx/testing');
    manifest.overrides = Object.fromEntries(packs.map((pack) => [pack.name, tarball(pack.name)]));
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    nest.e2eConfig(dir);
    // The template's e2e test boots AppModule expecting its Hello World: ours replaces it.
    rmSync(join(dir, 'test/app.e2e-spec.ts'), { force: true });
    // The README's files, then the services they inject and the tests; in a CommonJS project,
    // their relative imports without `.js`, as the README says.
    const files = [...readmeNestFiles(readFileSync(readme, 'utf8'))].map(([file, text]) => [
      join('src', file),
      text,
    ]);
    for (const file of ['src/payments.ts', 'src/invoices.ts', 'src/orders.spec.ts']) {
      files.push([file, readFileSync(join(template, file), 'utf8')]);
    }
    for (const file of ['test/orders.e2e-spec.ts', 'test/zk-connect.ts', ...nest.tests]) {
      files.push([file, readFileSync(join(template, file), 'utf8')]);
    }
    for (const [file, text] of files) {
      writeFileSync(join(dir, file), nest.esm ? text : withoutJsExtensions(text));
    }

    // One `npm install`, zkrx in package.json before it, as a user adding zkrx to a fresh project
    // does. Installing the template first, then zkrx, hid an ERESOLVE: the second install kept
    // the template's tree, and only a fresh one met @zkrx/testing's former peer on vitest.
    const installMs = await npmInstall(dir, npmArgs);
    log(`nest new: npm install (with zkrx) ${(installMs / 1000).toFixed(1)} s`);

    const env = { CI: '1', NO_COLOR: '1', ZKRX_TEST_CONNECT: '' };
    // One build (the project's TypeScript, whichever Node compiles it), then its unit and e2e
    // tests on every Node line, each with that line first on PATH (npx, the runner, Nest).
    await runCommand({ dir, command: 'npm', args: ['run', 'build'], env, label: 'npm run build' });
    const onLine = async (runtime) => {
      const lineEnv = { ...runtime.env, ...env };
      const unit = await runCommand({
        dir,
        command: 'npx',
        args: nest.unit,
        env: lineEnv,
        label: `npm test (${nest.runner}) on ${runtime.label}`,
      });
      const e2eRun = await runCommand({
        dir,
        command: 'npx',
        args: nest.e2e,
        env: lineEnv,
        label: `npm run test:e2e (${nest.runner}) on ${runtime.label}`,
      });
      log(
        `${runtime.label.padEnd(7)} ${nest.runner} ${unit || 'passed'}; e2e ${e2eRun || 'passed'}`,
      );
    };
    const ran = await Promise.allSettled(
      nodeLines.map((runtime) => parallel(() => onLine(runtime))),
    );
    const failures = ran.filter((result) => result.status === 'rejected');
    if (failures.length > 0)
      throw new Error(failures.map((result) => result.reason.message).join('\n'));
    return {
      ms: Math.round(performance.now() - started),
      last: `nest new (Nest ${major}) + the README's files: build, unit tests (ZkTestingModule), e2e (${nest.runner} global setup) passed on ${nodeLines.map((runtime) => runtime.label).join(', ')}`,
    };
  };
}
