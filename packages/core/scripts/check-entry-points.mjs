/**
 * Packaging check (after `build`): the package loads by its own name from ESM and from CommonJS,
 * both expose the same exports, and in both a client can load the native binding and run.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

// A client to a port nothing listens on: loading the binding and timing out proves it runs.
const probe = (load) => `
  ${load}
  (async () => {
    if (typeof createClient !== 'function') throw new Error('createClient is ' + typeof createClient);
    const client = createClient({ connect: '127.0.0.1:1', connectTimeoutMs: 200 });
    const code = await client.connected().then(() => 'connected', (error) => error.code);
    await client.close();
    if (code !== 'ConnectTimeout') throw new Error('connected() ended with ' + code);
    console.log(JSON.stringify(Object.keys(core).sort()));
  })().catch((error) => { console.error(error); process.exit(1); });
`;

function run(args) {
  return execFileSync(process.execPath, args, { cwd: packageDir, encoding: 'utf8' }).trim();
}

const esm = run([
  '--input-type=module',
  '-e',
  probe("import * as core from '@zkrx/core'; const { createClient } = core;"),
]);
const cjs = run([
  '-e',
  probe("const core = require('@zkrx/core'); const { createClient } = core;"),
]);

if (esm !== cjs) {
  console.error(`ESM and CommonJS exports differ:\n  import:  ${esm}\n  require: ${cjs}`);
  process.exit(1);
}
console.log(`@zkrx/core loads from import and require alike (${JSON.parse(esm).length} exports)`);
