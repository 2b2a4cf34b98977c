#!/usr/bin/env node
/**
 * The API report of a published package (run in its directory, after `build`): API Extractor's
 * report of every entry point of `exports` (one run per entry: API Extractor reads one), kept in
 * `api/<entry>.api.md`. Fails when the built API differs from the committed report, so the
 * public surface only changes on purpose: `node ../../scripts/api-report.mjs --update` (or
 * `pnpm api:update` at the root) writes the new report, to commit with the change.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const update = process.argv.includes('--update');
const root = new URL('..', import.meta.url).pathname;

/** `exports` entries with ESM types: `[subpath, declaration file]`. */
function entryPoints(manifest) {
  const found = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const types = target?.import?.types;
    if (typeof types === 'string') found.push([subpath, types]);
  }
  return found;
}

function reportName(subpath) {
  return subpath === '.' ? 'index' : subpath.replace(/^\.\//, '').replaceAll('/', '-');
}

/** Checks (or with --update, writes) one package's reports; returns the reports that differ. */
function report(packageDir) {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const reportDir = join(packageDir, 'api');
  const temp = mkdtempSync(join(tmpdir(), 'zkrx-api-report-'));
  const changed = [];
  try {
    mkdirSync(reportDir, { recursive: true });
    for (const [subpath, types] of entryPoints(manifest)) {
      const name = reportName(subpath);
      const config = ExtractorConfig.prepare({
        configObject: {
          projectFolder: packageDir,
          mainEntryPointFilePath: join(packageDir, types),
          compiler: {
            overrideTsconfig: {
              compilerOptions: {
                target: 'ES2022',
                module: 'NodeNext',
                moduleResolution: 'NodeNext',
                lib: ['ES2023', 'ESNext.Disposable'],
                types: ['node'],
                strict: true,
                skipLibCheck: true,
              },
              include: [join(packageDir, 'dist')],
            },
          },
          apiReport: {
            enabled: true,
            reportFolder: temp,
            reportTempFolder: temp,
            reportFileName: `${name}.api.md`,
          },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          messages: {
            compilerMessageReporting: { default: { logLevel: 'warning' } },
            extractorMessageReporting: {
              default: { logLevel: 'warning' },
              // No release tags (@public, @beta) in this project: every export is the API.
              'ae-missing-release-tag': { logLevel: 'none' },
              'ae-unresolved-link': { logLevel: 'none' },
              // Noted in the report itself, which is what the review reads.
              'ae-undocumented': { logLevel: 'none' },
              'ae-forgotten-export': { logLevel: 'none' },
            },
            tsdocMessageReporting: { default: { logLevel: 'none' } },
          },
        },
        configObjectFullPath: join(packageDir, 'api-extractor.json'),
        packageJsonFullPath: join(packageDir, 'package.json'),
      });
      const result = Extractor.invoke(config, { localBuild: true, showVerboseMessages: false });
      if (!result.succeeded) {
        throw new Error(`api-report: API Extractor failed on ${manifest.name}${subpath.slice(1)}`);
      }
      const built = readFileSync(join(temp, `${name}.api.md`), 'utf8');
      const committedFile = join(reportDir, `${name}.api.md`);
      const committed = existsSync(committedFile) ? readFileSync(committedFile, 'utf8') : undefined;
      if (built === committed) continue;
      if (update) writeFileSync(committedFile, built);
      changed.push(relative(root, committedFile));
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  console.log(
    `api-report ${manifest.name}: ${changed.length === 0 ? 'matches the committed report' : update ? `updated ${changed.join(', ')}` : `DIFFERS: ${changed.join(', ')}`}`,
  );
  return changed;
}

/** The published packages of the workspace (`--all`). */
function publishedPackages() {
  const dirs = [];
  for (const parent of ['packages', 'packages/adapters']) {
    for (const name of readdirSync(join(root, parent))) {
      const file = join(root, parent, name, 'package.json');
      if (existsSync(file) && !JSON.parse(readFileSync(file, 'utf8')).private) {
        dirs.push(join(root, parent, name));
      }
    }
  }
  return dirs;
}

const packages = process.argv.includes('--all') ? publishedPackages() : [process.cwd()];
const changed = packages.flatMap(report);
if (changed.length > 0 && !update) {
  console.error(
    `api-report: the public API differs from the committed report (${changed.join(', ')}).\n` +
      '  If the change is on purpose: pnpm api:update (after a build), and commit the report.',
  );
  process.exit(1);
}
