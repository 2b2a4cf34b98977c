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
    ...options,
  });
}
