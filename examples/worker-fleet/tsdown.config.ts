import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/demo.ts', 'src/worker.ts'],
  format: ['esm'],
  fixedExtension: false,
  hash: false,
  clean: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
});
