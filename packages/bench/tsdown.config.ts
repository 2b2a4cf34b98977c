import { defineConfig } from 'tsdown';

// ESM entries run with node (`node dist/cli.js`, the tools as `node dist/tools/<name>.js`): the
// workspace packages stay imports of their builds, except @zkrx/interop (a devDependency with no
// build: its source is bundled).
export default defineConfig({
  entry: {
    cli: 'src/cli.ts',
    'tools/addon-call-time': 'src/tools/addon-call-time.ts',
    'tools/lock-overhead': 'src/tools/lock-overhead.ts',
    'tools/lock-levers': 'src/tools/lock-levers.ts',
    'tools/lock-cpu': 'src/tools/lock-cpu.ts',
    'tools/client-cpu': 'src/tools/client-cpu.ts',
    'tools/sessions-memory': 'src/tools/sessions-memory.ts',
    'tools/watch-tree-memory': 'src/tools/watch-tree-memory.ts',
    'tools/otel-sdk': 'src/tools/otel-sdk.ts',
    'tools/fleet-rebalance': 'src/tools/fleet-rebalance.ts',
    'tools/fleet-worker': 'src/tools/fleet-worker.ts',
    'tools/curator-classpath': 'src/tools/curator-classpath.ts',
  },
  format: ['esm'],
  fixedExtension: false,
  hash: false,
  clean: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
  banner: { js: '#!/usr/bin/env node' },
  // The peer client stays an import of its CommonJS package (node loads it as it is).
  deps: { neverBundle: ['node-zookeeper-client'] },
});
