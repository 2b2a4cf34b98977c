/**
 * `@zkrx/core/native` as a user installs it: `npm install @zkrx/core zookeeper@7.3.0` in a fresh
 * project, npm running on the Node line (the binding compiles for the Node that installs it),
 * then the native smoke from ESM and CommonJS. On the lines where the stock binding builds
 * (scripts/runtimes.json: bindingLines) a node is written and read through the C client — but
 * on the native line (Node 24), whose stock binding test.sh builds the same way
 * (build-binding.sh) and runs core's whole native suite on: one compile of the C client less.
 * On the other lines (Node 26) `nativeTransport()` in a project without the binding (its install
 * fails there) throws a ZkError at once that says so and names the default transport. Bun and
 * Deno, which load only Node-API addons, get the same ZkError with the binding installed.
 */
import { join } from 'node:path';
import { installProject, prepareSmoke, runEntry, smokeEntries } from './npm-project.mjs';
import { pins } from './runtimes.mjs';

const smokeFile = new URL('./smokes/native.mjs', import.meta.url).pathname;
/** The stock binding, as @zkrx/core's peer range and its tests pin it. */
const binding = '7.3.0';

/** @param {Parameters<import('./scenarios.mjs').Scenario['project']>[0]} context */
export async function nativeProject({
  dir,
  packs,
  npmArgs,
  log,
  nodeLines,
  runtimes,
  parallel,
  chrootFor,
}) {
  const started = performance.now();
  const smoke = async (projectDir, runtime, expect) => {
    const env = { ...(await chrootFor(runtime.name)), root: '/smoke', expect };
    for (const [kind, entry] of smokeEntries) {
      const last = await runEntry({ dir: projectDir, runtime, entry, smokeEnv: { ...env, kind } });
      log(`${runtime.label.padEnd(7)} ${kind}  ${last}`);
    }
  };
  const onLine = async (runtime) => {
    const builds = pins.node.bindingLines.includes(runtime.version);
    if (builds && runtime.version === pins.node.native && nodeLines.length > 1) {
      log(
        `${runtime.label.padEnd(7)} the stock binding: built by build-binding.sh, core's native suite (test.sh)`,
      );
      return undefined;
    }
    const projectDir = join(dir, runtime.name);
    const { ms } = await installProject({
      dir: projectDir,
      packs,
      install: ['@zkrx/core'],
      registry: builds ? { zookeeper: binding } : {},
      npmArgs,
      env: runtime.env,
    });
    log(
      `${runtime.label.padEnd(7)} npm install @zkrx/core${builds ? ` zookeeper@${binding}` : ''} ${(ms / 1000).toFixed(1)} s`,
    );
    prepareSmoke({ dir: projectDir, smokeFile });
    await smoke(projectDir, runtime, builds ? 'native' : 'unavailable');
    return builds ? projectDir : undefined;
  };
  const results = await Promise.allSettled(
    nodeLines.map((runtime) => parallel(() => onLine(runtime))),
  );
  const failures = results.filter((result) => result.status === 'rejected');
  if (failures.length > 0)
    throw new Error(failures.map((result) => result.reason.message).join('\n'));
  // Bun and Deno, beside a binding built by a Node line.
  const built = results.map((result) => result.value).find(Boolean);
  if (built) {
    await Promise.all(
      runtimes.map((runtime) => parallel(() => smoke(built, runtime, 'unavailable'))),
    );
  }
  const lines = (builds) =>
    nodeLines
      .filter((runtime) => pins.node.bindingLines.includes(runtime.version) === builds)
      .filter(
        (runtime) => !builds || runtime.version !== pins.node.native || nodeLines.length === 1,
      )
      .map((runtime) => runtime.label)
      .join(', ');
  return {
    ms: Math.round(performance.now() - started),
    last: `the stock zookeeper@${binding} binding built and ran on ${lines(true) || 'no line'}; a ZkError naming the default transport on ${[lines(false), ...runtimes.map((runtime) => runtime.label)].filter(Boolean).join(', ')}`,
  };
}
