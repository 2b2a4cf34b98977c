/**
 * `npx zkrx …` runs the registry's package named `zkrx` — not ours — wherever @zkrx/cli is not
 * installed, as on a new user's machine (today a 404; tomorrow whoever takes the name). The docs
 * and the command's own help say `npx @zkrx/cli …`; `npx --no-install zkrx` (a project that
 * installed it) is fine.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownFiles, readMarkdown, repositoryRoot } from './markdown';

const unscoped = /\bnpx\s+(?:(?:-y|--yes)\s+)?zkrx\b/;

describe('npx names the package', () => {
  it.each([...markdownFiles(), 'packages/cli/src/help.ts'])('%s', (file) => {
    const text = file.endsWith('.md')
      ? readMarkdown(file)
      : readFileSync(join(repositoryRoot, file), 'utf8');
    const lines = text.split('\n').filter((line) => unscoped.test(line));
    expect(lines, 'write npx @zkrx/cli …').toEqual([]);
  });
});
