import { defineZkrxPackageBuild } from '../../tsdown.shared.ts';

// One shared chunk for the entries (ESM and CommonJS alike): `@zkrx/core/native` uses the very
// ZkError and client of `@zkrx/core`, not copies.
export default defineZkrxPackageBuild({
  entry: [
    'src/index.ts',
    'src/native/index.ts',
    'src/transport-spi.ts',
    'src/telemetry/telemetry-cache.ts',
  ],
});
