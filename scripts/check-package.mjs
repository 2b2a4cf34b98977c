#!/usr/bin/env node
/**
 * `check:package` of a published package (run in its directory, after `build`): packs it as
 * pnpm publishes it, runs arethetypeswrong on the tarball (every entry point, every module
 * resolution: node10, node16 CJS and ESM, bundler), and checks what the registry shows: the
 * license file, the repository metadata, and README links that work on the registry's page.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const packageDir = process.cwd();
const directory = relative(root, packageDir);
const repository = 'https://github.com/zkrx/zkrx';
const problems = [];

const out = mkdtempSync(join(tmpdir(), 'zkrx-check-package-'));
try {
  const tarball = execFileSync('pnpm', ['pack', '--pack-destination', out], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1);
  const read = (file) =>
    execFileSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');

  try {
    execFileSync(join(root, 'node_modules/.bin/attw'), [tarball, '--format', 'table-flipped'], {
      stdio: 'inherit',
    });
  } catch {
    problems.push('arethetypeswrong found problems (above)');
  }

  const manifest = JSON.parse(read('package.json'));
  if (!files.includes('package/LICENSE')) problems.push('no LICENSE in the tarball');
  else if (read('LICENSE') !== readFileSync(join(root, 'LICENSE'), 'utf8')) {
    problems.push("LICENSE differs from the repository's (Apache-2.0)");
  }
  if (manifest.license !== 'Apache-2.0') problems.push(`license is ${manifest.license}`);
  const expectedRepository = {
    type: 'git',
    url: `git+${repository}.git`,
    directory,
  };
  if (JSON.stringify(manifest.repository) !== JSON.stringify(expectedRepository)) {
    problems.push(`repository should be ${JSON.stringify(expectedRepository)}`);
  }
  if (manifest.homepage !== `${repository}/tree/main/${directory}#readme`) {
    problems.push(`homepage should be ${repository}/tree/main/${directory}#readme`);
  }
  if (manifest.bugs?.url !== `${repository}/issues`)
    problems.push(`bugs.url should be ${repository}/issues`);

  if (!files.includes('package/README.md')) problems.push('no README.md in the tarball');
  else {
    // The registry shows the README without the repository around it: only absolute links work.
    for (const [, target] of read('README.md').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (!/^(https?:|mailto:|#)/.test(target)) {
        problems.push(`README.md links to "${target}": use an absolute URL (${repository}/...)`);
      }
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

try {
  // The API report: the public surface changes only on purpose (api/*.api.md).
  execFileSync(process.execPath, [join(root, 'scripts/api-report.mjs')], { stdio: 'inherit' });
} catch {
  problems.push('the public API differs from api/*.api.md (above): pnpm api:update if on purpose');
}

if (problems.length > 0) {
  console.error(`check-package ${directory}:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `check-package ${directory}: attw green for every entry, API report, license, repository, README links`,
);
