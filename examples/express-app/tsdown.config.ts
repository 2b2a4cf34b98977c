import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  fixedExtension: false,
  hash: false,
  clean: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
});
