/**
 * The build every published zkrx package shares (tsdown, on rolldown): ESM (`.js`) and CommonJS
 * (`.cjs`) with their type declarations (`.d.ts`, `.d.cts`) and source maps, for the oldest Node
 * line of `engines`; a package names its entries (and anything of its own). Entries that share
 * code share one chunk in both formats: one copy of each class and each async-context store.
 */
import { defineConfig, type UserConfig } from 'tsdown';

export function defineZkrxPackageBuild(
  options: UserConfig & { entry: string[] | Record<string, string> },
) {
  return defineConfig({
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node22',
    platform: 'node',
    // `.js` for ES modules (the packages are "type": "module"), `.cjs` for CommonJS.
    fixedExtension: false,
    // Chunk names without a content hash: a release's files do not change name from build to
    // build when nothing in them changed.
    hash: false,
    // `__dirname` and `__filename` in the ES module build (import.meta.url is shimmed in CommonJS).
    shims: true,
    // A module whose one export is its default keeps it as `exports.default` in CommonJS (as
    // every other entry's default, and as tsup built it), not `module.exports =`: the same
    // `require(...).default` whatever else the entry exports.
    cjsDefault: false,
    // Class names are kept without `keepNames` (rolldown does not rename a class that refers to
    // itself, or one with static members, as esbuild did), which would wrap every function in a
    // `__name()` call — closures made per request included: it doubled a pipelined get's client
    // CPU under tsup. The class-names pack-install scenario checks every exported class.
    ...options,
  });
}
