import { defineConfig } from 'tsup';

// One ESM entry, run as `node dist/cli.js`: the workspace packages stay imports of their builds.
export default defineConfig({
  entry: ['src/cli.ts'],
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  banner: { js: '#!/usr/bin/env node' },
});
