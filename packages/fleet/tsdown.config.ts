import { defineZkrxPackageBuild } from '../../tsup.shared.ts';

export default defineZkrxPackageBuild({ entry: ['src/index.ts'] });
