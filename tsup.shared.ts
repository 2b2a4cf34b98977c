/**
 * The build every published zkrx package shares: ESM and CommonJS with their type declarations,
 * for Node 20; a package names its entries (and anything of its own).
 */
import { defineConfig, type Options } from 'tsup';

export function defineZkrxPackageBuild(
  options: Options & { entry: string[] | Record<string, string> },
) {
  return defineConfig({
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    shims: true,
    // No `keepNames` here: it wraps every function expression in a `__name()` call, closures made
    // per request included, and doubled the client CPU of a pipelined get (10 → 20 µs, `pnpm bench
    // --scenario pipelined-get`). The packages off the hot path (the adapters, the CLI, testing)
    // turn it on: their classes are what Nest's logs and injection tokens name.
    ...options,
  });
}
