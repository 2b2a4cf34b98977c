/**
 * The built package as its users load it: `require` from a CommonJS app (Nest's default) and
 * `import` from an ES module, every entry point, one injection token across them.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const names = [
  'ZkModule',
  'Locked',
  'LeaderOnly',
  'LeaderService',
  'InjectZkClient',
  'ZK_CLIENT',
  'currentLock',
  'lockSignal',
];

let cjs;
try {
  cjs = require('@zkrx/nestjs');
} catch (error) {
  if (error?.code === 'MODULE_NOT_FOUND') {
    console.error(
      'A dependency is not built: run `pnpm turbo run build --filter=@zkrx/nestjs...` first',
    );
  }
  throw error;
}
const cjsTerminus = require('@zkrx/nestjs/terminus');
const esm = await import('@zkrx/nestjs');
const esmTerminus = await import('@zkrx/nestjs/terminus');

for (const name of names) {
  assert.ok(cjs[name] !== undefined, `require('@zkrx/nestjs').${name}`);
  assert.ok(esm[name] !== undefined, `import('@zkrx/nestjs').${name}`);
}
const cjsFleet = require('@zkrx/nestjs/fleet');
const esmFleet = await import('@zkrx/nestjs/fleet');
for (const name of ['FleetService', 'ForEachOwnedItem']) {
  assert.equal(typeof cjsFleet[name], 'function', `require('@zkrx/nestjs/fleet').${name}`);
  assert.equal(typeof esmFleet[name], 'function', `import('@zkrx/nestjs/fleet').${name}`);
}
const cjsTesting = require('@zkrx/nestjs/testing');
const esmTesting = await import('@zkrx/nestjs/testing');
for (const name of ['ZkTestingModule', 'ZkTesting']) {
  assert.equal(typeof cjsTesting[name], 'function', `require('@zkrx/nestjs/testing').${name}`);
  assert.equal(typeof esmTesting[name], 'function', `import('@zkrx/nestjs/testing').${name}`);
}
// One LeaderService class across the entries (an injection token): /testing provides the
// main entry's, in both builds (one shared chunk of the entries in each format).
for (const [main, testing, kind] of [
  [cjs, cjsTesting, 'CommonJS'],
  [esm, esmTesting, 'ESM'],
]) {
  assert.ok(
    testing.ZkTestingModule.forRoot().providers.includes(main.LeaderService),
    `${kind}: ZkTestingModule provides the main entry's LeaderService`,
  );
}
assert.equal(typeof cjsTerminus.ZkHealthIndicator, 'function');
assert.equal(typeof esmTerminus.ZkHealthIndicator, 'function');
assert.equal(cjs.ZK_CLIENT, esm.ZK_CLIENT, 'one ZK_CLIENT token for CommonJS and ESM');
console.log(
  '@zkrx/nestjs loads with require() and import(), main, /terminus, /fleet and /testing entries',
);
