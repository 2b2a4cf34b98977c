/**
 * The README examples marked runnable (```` ```js runnable ````) run as they are printed: plain
 * JavaScript, on this Node, as an ES module importing the built packages by name. Each runs
 * in its own process against the test run's ZooKeeper, under its own chroot (the examples'
 * `'127.0.0.1:2181'` becomes `<test server>/<fresh root>`), must exit 0 by itself, and must
 * leave no session's node behind.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient, type ZkClient } from '@zkrx/core';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, markdownFiles, readMarkdown } from './markdown';

const run = promisify(execFile);
const EXAMPLE_CONNECT = "'127.0.0.1:2181'";
const TIMEOUT_MS = 90_000;
const scratch = join(import.meta.dirname, '../.zkrx-docs-runnable');

const examples = markdownFiles().flatMap((file) =>
  codeBlocks(readMarkdown(file))
    .filter((block) => block.runnable)
    .map((block) => ({ file, ...block })),
);

let client: ZkClient;
let connectString: string;
beforeAll(async () => {
  ({ connectString } = await testZooKeeper());
  client = createClient({ connect: connectString });
  await client.connected();
  mkdirSync(scratch, { recursive: true });
});
afterAll(() => client?.close());

/** Every node under `path`, deepest first, with its ephemeral owner. */
async function tree(path: string): Promise<{ path: string; ephemeralOwner: string }[]> {
  const nodes: { path: string; ephemeralOwner: string }[] = [];
  for (const name of await client.promises.children(path).catch(() => [])) {
    const child = `${path}/${name}`;
    nodes.push(...(await tree(child)));
    const stat = await client.promises.exists(child);
    if (stat) nodes.push({ path: child, ephemeralOwner: stat.ephemeralOwner });
  }
  return nodes;
}

it('finds runnable examples in the READMEs', () => {
  expect(examples.length).toBeGreaterThan(0);
});

describe.each(examples)('$file:$line', (example) => {
  it(
    'runs as printed and leaves no ephemeral node behind',
    async () => {
      expect(example.language).toBe('js');
      const chroot = uniqueRoot('readme');
      await client.promises.mkdirp(chroot);
      const code = example.code.replaceAll(EXAMPLE_CONNECT, `'${connectString}${chroot}'`);
      const file = join(
        scratch,
        `${example.file.replace(/[^a-z0-9]+/gi, '-')}-${example.line}.mjs`,
      );
      writeFileSync(file, code);
      let output = '';
      try {
        const result = await run(process.execPath, [file], {
          cwd: scratch,
          timeout: TIMEOUT_MS,
          killSignal: 'SIGKILL',
          env: { ...process.env, NODE_OPTIONS: '' },
        });
        output = result.stdout;
      } catch (error) {
        const failure = error as {
          code?: number;
          killed?: boolean;
          stdout?: string;
          stderr?: string;
        };
        throw new Error(
          `${example.file}:${example.line} ${failure.killed ? `did not exit within ${TIMEOUT_MS} ms` : `exited with ${failure.code}`}\n` +
            `--- stdout\n${failure.stdout}\n--- stderr\n${failure.stderr}`,
        );
      }
      const left = await tree(chroot);
      expect(left.filter((node) => node.ephemeralOwner !== '0')).toEqual([]);
      for (const node of left) await client.promises.delete(node.path);
      await client.promises.delete(chroot);
      expect(output).not.toBe('');
    },
    TIMEOUT_MS + 10_000,
  );
});
