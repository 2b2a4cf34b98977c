/**
 * The matrix's peers beside zkrx: the Java client's floors (`shared/peers/CuratorBench.java`,
 * impl `zk-floor`, run with the single-file launcher and Debian's jars, as run-peers.sh runs it)
 * and node-zookeeper-client (this bench's own `--impl node-zookeeper-client`).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { interopLocations } from '@zkrx/interop';
import type { PeerName, ScenarioName } from './options';

/** Which peers run each scenario (the others are zkrx's alone). */
export const PEERS_OF: Readonly<Partial<Record<ScenarioName, readonly PeerName[]>>> = {
  'floor-create-delete': ['java', 'node-zookeeper-client'],
  'floor-getchildren': ['java', 'node-zookeeper-client'],
  'pipelined-get': ['node-zookeeper-client', 'zkrx-unbatched'],
};

/**
 * The nearest `shared/peers` holding CuratorBench.java at or above `from` (the repository's
 * folder sits beside `shared/` in this workplace and in CI), or undefined.
 */
export function findPeersDir(
  from: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  let dir = resolve(from);
  for (;;) {
    const candidate = join(dir, 'shared', 'peers');
    if (exists(join(candidate, 'CuratorBench.java'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The command (program and arguments) of a Java floor run. Its class path is the interop peers'
 * (`ZKRX_CURATOR_CLASSPATH`, else Debian's jars of @zkrx/interop's `CURATOR_JARS`).
 */
export function javaPeerCommand(
  peersDir: string,
  run: { connect: string; scenario: ScenarioName; clients: number; ops: number },
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  return [
    'java',
    '-cp',
    interopLocations(env).curatorClasspath,
    join(peersDir, 'CuratorBench.java'),
    '--connect',
    run.connect,
    '--scenario',
    run.scenario,
    '--clients',
    String(run.clients),
    '--ops',
    String(run.ops),
    ...extra,
  ];
}
