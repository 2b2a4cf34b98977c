/**
 * Packaging check (after `build`): the package loads by its own name from ESM and from CommonJS,
 * both expose the same exports, the default transport runs without loading any native addon,
 * and `@zkrx/core/native` shares the main entry's classes and loads the `zookeeper` binding — on
 * the Node lines where it builds (scripts/runtimes.json); on the others it throws the main
 * entry's ZkError at once, naming the default transport.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const { node } = JSON.parse(
  readFileSync(new URL('../../../scripts/runtimes.json', import.meta.url), 'utf8'),
);
const major = (version) => version.split('.')[0];
const bindingRuns = node.bindingLines.some((line) => major(line) === major(process.versions.node));

// A client to a port nothing listens on: connecting and timing out proves it runs. Every addon
// the process loads goes through process.dlopen: the default transport must load none.
const probe = (load) => `
  const addons = [];
  const dlopen = process.dlopen;
  process.dlopen = function (module, filename, ...rest) {
    addons.push(filename);
    return dlopen.call(this, module, filename, ...rest);
  };
  ${load}
  (async () => {
    if (typeof createClient !== 'function') throw new Error('createClient is ' + typeof createClient);
    const client = createClient({ connect: '127.0.0.1:1', connectTimeoutMs: 200 });
    const code = await client.connected().then(() => 'connected', (error) => error.code);
    await client.close();
    if (code !== 'ConnectTimeout') throw new Error('connected() ended with ' + code);
    if (addons.length > 0) throw new Error('the default transport loaded ' + addons.join(', '));
    if (client.transportName !== 'typescript') throw new Error('transport ' + client.transportName);
    if (${bindingRuns}) {
      const native = createClient({ connect: '127.0.0.1:1', connectTimeoutMs: 200, transport: nativeTransport() });
      const nativeCode = await native.connected().then(() => 'connected', (error) => error.code);
      await native.close();
      if (nativeCode !== 'ConnectTimeout') throw new Error('native connected() ended with ' + nativeCode);
      if (!addons.some((file) => file.endsWith('zookeeper.node'))) throw new Error('no addon loaded by the native transport');
    }
    try {
      createClient({ connect: '127.0.0.1:1', tls: true, transport: nativeTransport() });
      throw new Error('native with tls did not throw');
    } catch (error) {
      if (!(error instanceof core.ZkError)) throw new Error('the native entry threw another ZkError class: ' + error);
      if (!${bindingRuns} && !error.message.includes('the default transport')) throw error;
    }
    console.log(JSON.stringify(Object.keys(core).sort()));
  })().catch((error) => { console.error(error); process.exit(1); });
`;

function run(args) {
  return execFileSync(process.execPath, args, { cwd: packageDir, encoding: 'utf8' }).trim();
}

const esm = run([
  '--input-type=module',
  '-e',
  probe(
    "const core = await import('@zkrx/core'); const { createClient } = core; const { nativeTransport } = await import('@zkrx/core/native');",
  ),
]);
const cjs = run([
  '-e',
  probe(
    "const core = require('@zkrx/core'); const { createClient } = core; const { nativeTransport } = require('@zkrx/core/native');",
  ),
]);

if (esm !== cjs) {
  console.error(`ESM and CommonJS exports differ:\n  import:  ${esm}\n  require: ${cjs}`);
  process.exit(1);
}
console.log(
  `@zkrx/core loads from import and require alike (${JSON.parse(esm).length} exports), no addon by default; @zkrx/core/native ${bindingRuns ? 'loads the binding' : `throws a ZkError at once on Node ${process.versions.node}`}`,
);
