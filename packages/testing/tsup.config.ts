import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({
  entry: [
    'src/index.ts',
    'src/vitest-global-setup.ts',
    'src/jest-global-setup.ts',
    'src/jest-global-teardown.ts',
  ],
});
