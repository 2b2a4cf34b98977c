import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

// The page's script and style are kept as text in src/page/ (assets.ts reads nothing at run
// time: they are strings), so the one entry is all there is to build.
export default defineZkrxPackageBuild({ entry: ['src/index.ts'] });
