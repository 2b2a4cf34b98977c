/**
 * Every link of every Markdown file works: relative links reach a file inside the repository,
 * links into the repository's GitHub tree name a path that exists, anchors name a heading, and
 * the READMEs of published packages (shown on the registry, without the repository around
 * them) use absolute URLs only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  linkTargets,
  markdownFiles,
  readMarkdown,
  repositoryRoot,
  repositoryUrl,
} from './markdown';

const publishedDirs = (() => {
  const config = JSON.parse(readFileSync(join(repositoryRoot, '.changeset/config.json'), 'utf8'));
  const names = new Set<string>(config.fixed[0]);
  return markdownFiles()
    .filter((file) => file.endsWith('/README.md'))
    .map((file) => dirname(file))
    .filter((dir) => {
      const manifest = join(repositoryRoot, dir, 'package.json');
      return existsSync(manifest) && names.has(JSON.parse(readFileSync(manifest, 'utf8')).name);
    });
})();

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const anchors = new Set<string>();
  for (const [, heading = ''] of withoutCode.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    anchors.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .trim()
        .replace(/\s/g, '-'),
    );
  }
  return anchors;
}

describe.each(markdownFiles())('%s', (file) => {
  const markdown = readMarkdown(file);
  const published = publishedDirs.includes(dirname(file)) && file.endsWith('README.md');

  it('has links that work (and only absolute ones when shown on the registry)', () => {
    const broken: string[] = [];
    for (const target of linkTargets(markdown)) {
      const [path = '', anchor] = target.split('#');
      if (/^(mailto|https?):/.test(target)) {
        const inRepository = new RegExp(`^${repositoryUrl}/(?:blob|tree)/main/([^#?]*)`).exec(
          target,
        );
        if (inRepository && !existsSync(join(repositoryRoot, inRepository[1] ?? ''))) {
          broken.push(`${target}: no ${inRepository[1]} in the repository`);
        }
        continue;
      }
      if (path === '') {
        if (anchor && !anchorsOf(markdown).has(anchor)) broken.push(`${target}: no such heading`);
        continue;
      }
      if (published) broken.push(`${target}: relative, broken on the registry's page`);
      const resolved = join(repositoryRoot, dirname(file), path);
      if (relative(repositoryRoot, resolved).startsWith('..')) {
        broken.push(`${target}: outside the repository`);
      } else if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
      }
    }
    expect(broken).toEqual([]);
  });
});
