import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

export default defineZkrxPackageBuild({ entry: ['src/index.ts'] });
