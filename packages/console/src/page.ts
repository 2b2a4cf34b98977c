/**
 * The page: one HTML document for every view (the script reads the view from the URL), its
 * script and style, served from the package's own files with a strict Content-Security-Policy —
 * no inline script, nothing from elsewhere.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The page's files, read once: `src/page/` beside this file, or beside the build's. */
function asset(name: string): string {
  for (const where of [`./page/${name}`, `../src/page/${name}`]) {
    try {
      return readFileSync(new URL(where, import.meta.url), 'utf8');
    } catch {}
  }
  throw new Error(`@zkrx/console: its page file ${name} is missing from the package`);
}

/** The page's files and `version`, a digest of both: their URLs carry it (`?v=`). */
export interface Assets {
  readonly script: string;
  readonly style: string;
  readonly version: string;
}

let cached: Assets | undefined;

export function assets(): Assets {
  if (!cached) {
    const script = asset('console.js');
    const style = asset('console.css');
    const version = createHash('sha256').update(script).update(style).digest('hex').slice(0, 16);
    cached = { script, style, version };
  }
  return cached;
}

/** Text for an HTML attribute or element: `&`, `<`, `>`, `"`, `'` replaced. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The document, for a console mounted at `basePath` (`''` at the root). */
export function pageHtml(basePath: string, label: string): string {
  const base = escapeHtml(`${basePath}/`);
  // Versioned: a browser keeps them (and its compiled script) from one page to the next.
  const version = assets().version;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="${base}">
<title>zkrx console · ${escapeHtml(label)}</title>
<link rel="stylesheet" href="assets/console.css?v=${version}">
<script type="module" src="assets/console.js?v=${version}"></script>
</head>
<body>
<header id="top"><a class="brand" href="locks">zkrx console</a><nav id="nav"></nav><span id="status" class="status">connecting…</span><span id="who"></span></header>
<main id="main"><p class="muted">Loading…</p></main>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;
}

/** The headers of every response: nothing from elsewhere, no framing, no sniffing. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: with it Chromium sends a form's POST with `Origin: null`.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
