/**
 * Every class the published packages export keeps its name, from ESM and from CommonJS: what an
 * uncaught error prints (`ZkError: …`, not `_class2 [ZkError]: …`), what `constructor.name`
 * and Nest's logs say. The tests run the sources, so only the built files can lose a name.
 */
const entries = [
  '@zkrx/core',
  '@zkrx/lock',
  '@zkrx/lock/recipe',
  '@zkrx/rwlock',
  '@zkrx/leader',
  '@zkrx/fleet',
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
  const { ZkError } = await load('@zkrx/core');
  const { inspect } = await load('node:util');
  const printed = inspect(new ZkError('ConnectionLoss', 'printed')).split('\n')[0];
  if (printed !== 'ZkError: printed') wrong.push(`an uncaught ZkError prints as "${printed}"`);
  if (wrong.length > 0) throw new Error(`classes that lost their names:\n  ${wrong.join('\n  ')}`);
  return `class names: ${classes} exported classes of ${entries.length} entries keep their names`;
}
