/**
 * Every class the adapters, the CLI and @zkrx/testing export keeps its name, from ESM and from
 * CommonJS: what `constructor.name` and Nest's logs and injection tokens say. The tests run the
 * sources, so only the built files can lose a name. Core and the recipes are built without
 * esbuild's keepNames (it doubles a pipelined get's client CPU): in their CommonJS build a class
 * with static members is still named `_classN` (a known defect, left: see tsup.shared.ts).
 */
const entries = [
  '@zkrx/express',
  '@zkrx/express/fleet',
  '@zkrx/nestjs',
  '@zkrx/nestjs/testing',
  '@zkrx/testing',
  '@zkrx/cli',
];

const isClass = (value) =>
  typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));

export default async function smoke(load) {
  await load('reflect-metadata'); // what a Nest app loads first
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
  if (wrong.length > 0) throw new Error(`classes that lost their names:\n  ${wrong.join('\n  ')}`);
  return `class names: ${classes} exported classes of ${entries.length} entries keep their names`;
}
