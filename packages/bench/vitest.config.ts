import { defineZkrxVitest } from '../../vitest.shared.ts';

// The smoke test runs every scenario (tiny N) and the self-tests: a few minutes on 2 cores at most.
export default defineZkrxVitest(import.meta.dirname, { integrationTimeoutMs: 120_000 });
