import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

// `index` is the programmatic entry; `bin` is the `zkrx` command (`bin` in package.json points
// at its ESM build; the `#!/usr/bin/env node` line is kept).
export default defineZkrxPackageBuild({ entry: ['src/index.ts', 'src/bin.ts'] });
