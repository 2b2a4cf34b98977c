/**
 * Every class every published package exports keeps its name, from every entry of its
 * `exports`, from ESM and from CommonJS: what `constructor.name`, error names in logs and Nest's
 * logs and injection tokens say. The tests run the sources, so only the built files can lose a
 * name (tsup's CommonJS step renamed classes with static members `_classN`, and esbuild a class
 * that refers to itself; tsdown keeps them, without `keepNames` and its CPU cost).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const isClass = (value) =>
  typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));

/** Every JavaScript entry of every installed @zkrx package: `@zkrx/lock`, `@zkrx/lock/recipe`… */
function zkrxEntries() {
  const scope = join(process.cwd(), 'node_modules/@zkrx');
  return readdirSync(scope).flatMap((name) => {
    const manifest = JSON.parse(readFileSync(join(scope, name, 'package.json'), 'utf8'));
    return Object.keys(manifest.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => `${manifest.name}${subpath.slice(1)}`);
  });
}

export default async function smoke(load) {
  await load('reflect-metadata'); // what a Nest app loads first
  const entries = zkrxEntries();
  const wrong = [];
  let classes = 0;
  for (const entry of entries) {
    const exports = await load(entry);
    for (const [name, value] of Object.entries(exports)) {
      if (!isClass(value)) continue;
      classes += 1;
      if (value.name !== name) wrong.push(`${entry} ${name}: named ${value.name}`);
    }
  }
  const packages = new Set(entries.map((entry) => entry.split('/').slice(0, 2).join('/')));
  if (packages.size < 9) throw new Error(`only ${[...packages].join(', ')} installed`);
  if (wrong.length > 0) throw new Error(`classes that lost their names:\n  ${wrong.join('\n  ')}`);
  return `class names: ${classes} exported classes of ${entries.length} entries of ${packages.size} packages keep their names`;
}
