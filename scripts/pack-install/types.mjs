/**
 * TypeScript consumers of every package's types, as users compile them: one npm project with
 * every published package from its tarball and the types of their peers (@types/node of the
 * oldest line of `engines`), typechecked with `skipLibCheck: false` — our declaration files
 * checked whole — by the oldest TypeScript the README promises and by TypeScript 7 (the native
 * compiler), each pinned in scripts/runtimes.json, in three setups: ES modules with `nodenext`,
 * ES modules with `bundler`, CommonJS with `nodenext` (what Nest 11 apps are). The code: an
 * import of every entry of every package, and the README's snippets — plain Node (its runnable
 * JavaScript, checked as JavaScript), the NestJS files, the Express app.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readmeNestFiles } from './nest-new.mjs';
import { installProject } from './npm-project.mjs';
import { pins } from './runtimes.mjs';

const run = promisify(execFile);
const here = new URL('.', import.meta.url).pathname;
const repo = new URL('../..', import.meta.url).pathname;
const [oldest, newest] = pins.typescript;
const oldestNode = pins.node.lines[0].split('.')[0];

/** The first fenced block of `lang` after `marker` in `text`. */
function blockAfter(text, marker, lang) {
  const after = text.slice(text.indexOf(marker));
  const block = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(after)?.[1];
  if (!block) throw new Error(`no \`\`\`${lang} block after ${marker}`);
  return block;
}

/** Every JavaScript entry of the packed packages (`@zkrx/lock/recipe`…), from their manifests. */
function entriesOf(packs) {
  return packs.flatMap((pack) =>
    Object.keys(pack.manifest.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => `${pack.name}${subpath.slice(1)}`),
  );
}

/** A file that imports every entry and uses each namespace (so that none is elided). */
function importEverything(entries) {
  const names = entries.map((_, i) => `entry${i}`);
  return [
    ...entries.map((entry, i) => `import * as ${names[i]} from '${entry}';`),
    `export const everything = [${names.join(', ')}].map((namespace) => Object.keys(namespace).length);`,
    '',
  ].join('\n');
}

const base = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
};

/**
 * The plain-Node snippet is JavaScript, checked as JavaScript: the API's types against its calls
 * (`strict` off: its own functions have no annotations, as JavaScript has none).
 */
const javascript = { ...base, strict: false, allowJs: true, checkJs: true };

/** The three setups: the project's type, its compiler options, the files it compiles. */
const setups = {
  'esm-nodenext': {
    type: 'module',
    options: { module: 'nodenext', moduleResolution: 'nodenext' },
    express: true,
  },
  'esm-bundler': {
    type: 'module',
    options: { module: 'esnext', moduleResolution: 'bundler' },
    express: true,
  },
  // CommonJS: no top-level await (the Express snippet has one), the `require` types of each entry.
  'cjs-nodenext': {
    type: 'commonjs',
    options: { module: 'nodenext', moduleResolution: 'nodenext' },
    express: false,
  },
};

/** @param {Parameters<import('./scenarios.mjs').Scenario['project']>[0]} context */
export async function typesProject({ dir, packs, npmArgs, log, parallel }) {
  const started = performance.now();
  const { ms } = await installProject({
    dir,
    packs,
    install: packs.map((pack) => pack.name),
    registry: {
      typescript: oldest,
      'typescript-7': `npm:typescript@${newest}`,
      '@types/node': `^${oldestNode}.0.0`,
      rxjs: '^7.8.0',
      '@nestjs/common': '^11.0.0',
      '@nestjs/core': '^11.0.0',
      '@nestjs/schedule': '^6.0.0',
      '@nestjs/terminus': '^11.0.0',
      'reflect-metadata': '^0.2.0',
      express: '^5.0.0',
      '@types/express': '^5.0.0',
      vitest: '^5.0.0',
    },
    npmArgs,
  });
  log(
    `npm install ${(ms / 1000).toFixed(1)} s (TypeScript ${oldest} and ${newest}, @types/node ${oldestNode})`,
  );
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const expressReadme = readFileSync(join(repo, 'packages/adapters/express/README.md'), 'utf8');
  const nestFiles = readmeNestFiles(readme);
  const compilers = [
    [oldest, join(dir, 'node_modules/typescript/bin/tsc')],
    [newest, join(dir, 'node_modules/typescript-7/bin/tsc')],
  ];
  const checks = [];
  for (const [name, setup] of Object.entries(setups)) {
    const project = join(dir, name);
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ type: setup.type })}\n`);
    const files = new Map([
      ['entries.ts', importEverything(entriesOf(packs))],
      ...[...nestFiles].map(([file, text]) => [file, text]),
      ['payments.ts', readFileSync(join(here, 'nest-new/src/payments.ts'), 'utf8')],
      ['invoices.ts', readFileSync(join(here, 'nest-new/src/invoices.ts'), 'utf8')],
    ]);
    // The plain-Node snippet is JavaScript (an ES module): checked as such, on its own.
    writeFileSync(
      join(project, 'plain.mjs'),
      blockAfter(readme, '## Plain Node, as observables', 'js runnable'),
    );
    if (setup.express) files.set('express-app.ts', blockAfter(expressReadme, '', 'ts'));
    for (const [file, text] of files) writeFileSync(join(project, file), text);
    copyFileSync(join(here, 'types/globals.d.ts'), join(project, 'globals.d.ts'));
    const configs = {
      'tsconfig.json': { compilerOptions: { ...base, ...setup.options }, include: ['*.ts'] },
    };
    if (setup.javascript) {
      configs['tsconfig.js.json'] = {
        compilerOptions: { ...javascript, ...setup.options },
        include: ['plain.mjs', 'globals.d.ts'],
      };
    }
    for (const [file, config] of Object.entries(configs)) {
      writeFileSync(join(project, file), `${JSON.stringify(config, null, 2)}\n`);
    }
    for (const [version, tsc] of compilers) {
      for (const config of Object.keys(configs)) {
        const check = () =>
          run(process.execPath, [tsc, '-p', join(project, config)], {
            cwd: project,
            maxBuffer: 64 * 1024 * 1024,
          });
        checks.push(
          parallel(check).then(
            () => log(`TypeScript ${version.padEnd(5)} ${name} (${config}): no error`),
            (error) => {
              throw new Error(
                `TypeScript ${version}, ${name} (${config}):\n${error.stdout}${error.stderr}`,
              );
            },
          ),
        );
      }
    }
  }
  const results = await Promise.allSettled(checks);
  const failures = results.filter((result) => result.status === 'rejected');
  if (failures.length > 0)
    throw new Error(failures.map((result) => result.reason.message).join('\n'));
  return {
    ms: Math.round(performance.now() - started),
    last: `every entry and the README's snippets typecheck with TypeScript ${oldest} and ${newest}, ${Object.keys(setups).join(', ')}, skipLibCheck false`,
  };
}
