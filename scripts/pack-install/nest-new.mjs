/**
 * A fresh `nest new` project (Jest, CommonJS, npm) with zkrx from the packed tarballs: the root
 * README's NestJS snippet as its code (its files as they are, beside the services they inject),
 * a unit test on `@zkrx/nestjs/testing` (no ZooKeeper) and an e2e test booting its AppModule on
 * `@zkrx/testing`'s Jest global setup (a real server it starts), run with the project's own
 * `npm test` and `npm run test:e2e`.
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

/** The @nestjs/cli major that makes the project (its templates are Nest 11's). */
const nestCli = '@nestjs/cli@11';

/**
 * Makes the project in `dir` with `nest new`, adds zkrx, runs its unit and e2e tests.
 *
 * @return {Promise<{ ms: number, last: string }>}
 */
export async function nestNewProject({ dir, packs, npmArgs = [], log }) {
  const started = performance.now();
  const parent = join(dir, '..');
  mkdirSync(parent, { recursive: true });
  try {
    await run(
      'npx',
      ['-y', nestCli, 'new', 'app', '--package-manager', 'npm', '--skip-git', '--skip-install'],
      { cwd: parent, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
    );
  } catch (error) {
    throw new Error(`nest new failed:\n${error.stderr || error.message}`);
  }
  cpSync(join(parent, 'app'), dir, { recursive: true });
  rmSync(join(parent, 'app'), { recursive: true, force: true });
  log(`nest new: ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // zkrx from the tarballs (every @zkrx package overridden to its tarball), what the code uses.
  const tarball = (name) => `file:${packs.find((pack) => pack.name === name).tarball}`;
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const name of ['@zkrx/nestjs', '@zkrx/core', '@zkrx/lock', '@zkrx/leader']) {
    manifest.dependencies[name] = tarball(name);
  }
  manifest.dependencies['@nestjs/schedule'] = '^6.0.0';
  manifest.devDependencies['@zkrx/testing'] = tarball('@zkrx/testing');
  manifest.overrides = Object.fromEntries(packs.map((pack) => [pack.name, tarball(pack.name)]));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const e2e = JSON.parse(readFileSync(join(dir, 'test/jest-e2e.json'), 'utf8'));
  e2e.globalSetup = '@zkrx/testing/jest-global-setup';
  e2e.globalTeardown = '@zkrx/testing/jest-global-teardown';
  writeFileSync(join(dir, 'test/jest-e2e.json'), `${JSON.stringify(e2e, null, 2)}\n`);
  // The template's e2e test boots AppModule, which now needs ZK_CONNECT: ours replaces it.
  rmSync(join(dir, 'test/app.e2e-spec.ts'), { force: true });
  cpSync(template, dir, { recursive: true });
  const readmeFiles = readmeNestFiles(readFileSync(readme, 'utf8'));
  for (const [name, text] of readmeFiles) writeFileSync(join(dir, 'src', name), text);
  log(`nest new: the README's ${[...readmeFiles.keys()].join(', ')}`);

  const installMs = await npmInstall(dir, npmArgs);
  log(`nest new: npm install ${(installMs / 1000).toFixed(1)} s`);

  const env = { CI: '1', ZKRX_TEST_CONNECT: '' };
  await runCommand({ dir, command: 'npm', args: ['run', 'build'], env, label: 'npm run build' });
  const unit = await runCommand({
    dir,
    command: 'npx',
    args: ['jest', '--ci', '--silent'],
    env,
    label: 'npm test (jest)',
  });
  const e2eRun = await runCommand({
    dir,
    command: 'npx',
    args: ['jest', '--ci', '--silent', '--config', './test/jest-e2e.json'],
    env,
    label: 'npm run test:e2e (jest)',
  });
  log(`nest new: jest ${unit || 'passed'}; e2e ${e2eRun || 'passed'}`);
  return {
    ms: Math.round(performance.now() - started),
    last: 'nest new + zkrx: build, unit tests (ZkTestingModule), e2e (jest global setup) passed',
  };
}
