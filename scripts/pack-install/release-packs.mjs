/**
 * The tarballs a release would publish: the release plan applied (`changeset version`) in a
 * scratch copy of the workspace, then `pnpm pack` of every published package there.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The published packages: the fixed group of .changeset/config.json. */
export function publishedPackageNames(root) {
  const config = JSON.parse(readFileSync(join(root, '.changeset/config.json'), 'utf8'));
  if (config.fixed.length !== 1)
    throw new Error('expected one fixed group in .changeset/config.json');
  return [...config.fixed[0]];
}

/** Every workspace package: name → directory (relative to the root). */
export function workspacePackages(root) {
  const globs = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
    .split('\n')
    .map((line) => /^\s+-\s+['"]?([^'"#\s]+)['"]?/.exec(line)?.[1])
    .filter((glob) => glob?.endsWith('/*'));
  const packages = new Map();
  for (const glob of globs) {
    const parent = join(root, glob.slice(0, -2));
    for (const entry of existsSync(parent) ? readdirSync(parent) : []) {
      const dir = join(parent, entry);
      if (!existsSync(join(dir, 'package.json'))) continue;
      const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      packages.set(name, relative(root, dir));
    }
  }
  return packages;
}

const dependencyFields = [
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'optionalDependencies',
];

/**
 * Packs what `pnpm changeset version && pnpm changeset publish` would publish now, without
 * touching the workspace: a scratch copy gets the manifests, the built files and the pending
 * changesets, `changeset version` runs there, and each published package is packed with pnpm
 * (so `workspace:` ranges are rewritten as on publish). Needs a build.
 *
 * @param {{ root: string, scratch: string, out: string, log?: (line: string) => void }} options
 * @return {Promise<{ name: string, version: string, dir: string, tarball: string, manifest: object }[]>}
 */
export async function packRelease({ root, scratch, out, log = () => {} }) {
  const packages = workspacePackages(root);
  const published = publishedPackageNames(root);
  mkdirSync(out, { recursive: true });
  for (const file of ['package.json', 'pnpm-workspace.yaml', 'LICENSE', '.changeset']) {
    cpSync(join(root, file), join(scratch, file), { recursive: true });
  }
  for (const [name, dir] of packages) {
    const files = published.includes(name)
      ? ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist', 'src']
      : ['package.json'];
    for (const file of files) {
      if (!existsSync(join(root, dir, file))) continue;
      cpSync(join(root, dir, file), join(scratch, dir, file), {
        recursive: true,
        filter: (source) => !source.includes('node_modules'),
      });
    }
    if (published.includes(name) && !existsSync(join(root, dir, 'dist'))) {
      throw new Error(`${name} is not built (${dir}/dist is missing): run pnpm build first`);
    }
  }
  // `changeset version` loads its changelog generator from the workspace's node_modules.
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  execFileSync(join(root, 'node_modules/.bin/changeset'), ['version'], {
    cwd: scratch,
    stdio: ['ignore', 'ignore', 'inherit'],
  });

  const packs = [];
  for (const name of published) {
    const dir = join(scratch, packages.get(name));
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    // pnpm reads the version of a `workspace:` dependency from the package's node_modules.
    for (const field of dependencyFields) {
      for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
        if (!String(range).startsWith('workspace:')) continue;
        const link = join(dir, 'node_modules', dependency);
        if (existsSync(link)) continue;
        mkdirSync(dirname(link), { recursive: true });
        symlinkSync(join(scratch, packages.get(dependency)), link);
      }
    }
    const output = execFileSync('pnpm', ['pack', '--pack-destination', out], {
      cwd: dir,
      encoding: 'utf8',
    });
    const tarball = output.trim().split('\n').at(-1);
    const packed = JSON.parse(
      execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
    );
    log(`packed ${name}@${packed.version} → ${relative(out, tarball)}`);
    packs.push({ name, version: packed.version, dir, tarball, manifest: packed });
  }
  writeFileSync(join(out, 'packs.json'), `${JSON.stringify(packs, null, 2)}\n`);
  return packs;
}
