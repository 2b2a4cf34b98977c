import { defineZkrxPackageBuild } from '../../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: ['src/index.ts', 'src/terminus.ts', 'src/fleet.ts'],
  // Every constructor parameter names its token (@Inject): the build needs no decorator
  // metadata, so esbuild compiles it (no swc).
  tsconfig: 'tsconfig.build.json',
});
