/**
 * A real headless Chromium (Debian's, /usr/bin/chromium) driven by playwright-core, one launch
 * per test file, with the flags that keep it off the network (without them Chromium waits on
 * this closed network) and a fresh profile. Never a browser of playwright's own.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.ZKRX_CHROMIUM ?? '/usr/bin/chromium';

/** Whether the browser tests can run here, and why not (for `describe.skipIf`). */
export const chromiumMissing: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, as scripts/bootstrap.sh does; or set ZKRX_CHROMIUM)`;

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  readonly context: BrowserContext;
  /** A new tab (closed with the browser). */
  page(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile; `close()` ends it and removes the profile. */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'zkrx-console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1360, height: 860 },
  });
  return {
    context,
    page: () => context.newPage(),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves the time (this machine's clock, ms) at which an element matching `selector` was
 * first in the page, watched by a MutationObserver from now on: an event-to-render latency is
 * that time minus the event's. With `text`, the element must also have that text.
 */
export async function renderedAt(
  page: Page,
  selector: string,
  text?: string,
): Promise<() => Promise<number>> {
  const key = `seen-${Math.random().toString(36).slice(2)}`;
  // As text: a function here would be compiled with helpers (tsx's `__name`) the page has not.
  await page.evaluate(`(() => {
    const selector = ${JSON.stringify(selector)};
    const text = ${JSON.stringify(text ?? null)};
    const key = ${JSON.stringify(key)};
    const record = () => {
      if (window[key] !== undefined) return;
      const found = document.querySelector(selector);
      if (found && (text === null || found.textContent === text)) window[key] = Date.now();
    };
    new MutationObserver(record).observe(document.body, { childList: true, subtree: true, characterData: true });
    record();
  })()`);
  return async () => {
    await page.waitForFunction(
      (name) => (window as unknown as Record<string, number>)[name] !== undefined,
      key,
      { timeout: 15_000 },
    );
    return page.evaluate(
      (name) => (window as unknown as Record<string, number>)[name] as number,
      key,
    );
  };
}

/** A CSS attribute selector's value, quoted. */
export function quoted(value: string): string {
  return JSON.stringify(value);
}
