import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/terminus.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  shims: true,
  // Every constructor parameter names its token (@Inject): the build needs no decorator
  // metadata, so esbuild compiles it (no swc).
  tsconfig: 'tsconfig.build.json',
});
