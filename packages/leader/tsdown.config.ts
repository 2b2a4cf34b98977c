import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

export default defineZkrxPackageBuild({
  // `@zkrx/leader/candidacy` is src/candidacy-entry.ts, built as dist/candidacy.*.
  entry: { index: 'src/index.ts', candidacy: 'src/candidacy-entry.ts' },
});
