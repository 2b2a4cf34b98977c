import { defineZkrxVitest } from '../../vitest.shared.ts';

// The integration suite runs a short seeded soak of every mode and the positive controls, each
// against its own 3-server ensemble: about two to three minutes on 2 cores.
export default defineZkrxVitest(import.meta.dirname, { integrationTimeoutMs: 180_000 });
