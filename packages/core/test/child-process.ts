/**
 * Runs @zkrx/core in a child Node process, to see what it prints there: the package's source is
 * bundled by rolldown (tsdown's own) into a temporary CommonJS file, so no build is needed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';

const packageDir = resolve(import.meta.dirname, '..');

/**
 * A CommonJS bundle of `src/index.ts` and `nativeTransport` in a temporary directory, and how to
 * remove it.
 */
export async function bundleCore(): Promise<{ file: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'zkrx-core-child-'));
  const file = join(dir, 'core.cjs');
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(join(packageDir, 'src/index.ts'))};\nexport { nativeTransport } from ${JSON.stringify(join(packageDir, 'src/native/index.ts'))};\n`,
  );
  await build({
    input: entry,
    platform: 'node',
    external: ['zookeeper', 'rxjs'],
    logLevel: 'silent',
    output: { file, format: 'cjs' },
  });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` (CommonJS) with `node -e`; `zookeeper` and `rxjs` resolve from this package.
 */
export function runNode(
  script: string,
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      cwd: packageDir,
      env: { ...process.env, NODE_PATH: join(packageDir, 'node_modules'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child process timed out after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}
