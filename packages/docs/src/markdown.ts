/**
 * The Markdown files of the repository and what the checks read in them: fenced code blocks
 * (with the `runnable` marker) and link targets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The repository's root. */
export const repositoryRoot = join(import.meta.dirname, '../../..');

/** The repository's URL, as every published package.json names it. */
export const repositoryUrl = 'https://github.com/zkrx/zkrx';

const skipped = new Set(['node_modules', 'dist', '.git', '.turbo', '.changeset']);

/** Every Markdown file of the repository (relative paths), outside dependencies and builds. */
export function markdownFiles(dir = repositoryRoot): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipped.has(entry.name) || entry.name.startsWith('.zkrx')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) files.push(relative(repositoryRoot, path));
  }
  return files.sort();
}

/** A fenced code block. */
export interface CodeBlock {
  /** The language, the first word of the info string (`js`, `ts`, `sh`...). */
  readonly language: string;
  /** True when the info string also says `runnable` (```` ```js runnable ````). */
  readonly runnable: boolean;
  /** The 1-based line of the opening fence. */
  readonly line: number;
  readonly code: string;
}

/** The fenced code blocks of a Markdown text (backtick fences, not indented). */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^(`{3,})(.*)$/.exec(lines[index] ?? '');
    if (!open) continue;
    const [, fence = '```', info = ''] = open;
    const words = info.trim().split(/\s+/);
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? '').startsWith(fence))
      body.push(lines[end++] ?? '');
    blocks.push({
      language: words[0] ?? '',
      runnable: words.slice(1).includes('runnable'),
      line: index + 1,
      code: body.join('\n'),
    });
    index = end;
  }
  return blocks;
}

/** The targets of the inline links and images of a Markdown text, outside code. */
export function linkTargets(markdown: string): string[] {
  const prose = markdown
    .replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1] ?? '',
  );
}

export function readMarkdown(file: string): string {
  return readFileSync(join(repositoryRoot, file), 'utf8');
}
