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
    // Classes keep their names in both builds. Without it the CommonJS build (made from the ESM
    // one when chunks are split) turns a class with static members into `_class2 = class …`, so
    // an uncaught ZkError printed as `_class2 [ZkError]: …` and `error.constructor.name` lied.
    keepNames: true,
    ...options,
  });
}
