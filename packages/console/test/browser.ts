/**
 * A real headless Chromium (Debian's, /usr/bin/chromium) driven by playwright-core, one launch
 * per test file, with the flags that keep it off the network (without them Chromium waits on
 * this closed network) and a fresh profile. Never a browser of playwright's own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.ZKRX_CHROMIUM ?? '/usr/bin/chromium';

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
 * that time minus the event's.
 */
export async function renderedAt(page: Page, selector: string): Promise<() => Promise<number>> {
  const key = `seen-${Math.random().toString(36).slice(2)}`;
  await page.evaluate(
    ({ selector, key }) => {
      const record = () => {
        if (
          (window as unknown as Record<string, number>)[key] === undefined &&
          document.querySelector(selector)
        ) {
          (window as unknown as Record<string, number>)[key] = Date.now();
        }
      };
      new MutationObserver(record).observe(document.body, {
        childList: true,
        subtree: true,
        characterData: true,
      });
      record();
    },
    { selector, key },
  );
  return async () => {
    await page.waitForFunction(
      (key) => (window as unknown as Record<string, number>)[key] !== undefined,
      key,
      { timeout: 15_000 },
    );
    return page.evaluate(
      (key) => (window as unknown as Record<string, number>)[key] as number,
      key,
    );
  };
}

/** A CSS attribute selector's value, quoted. */
export function quoted(value: string): string {
  return JSON.stringify(value);
}
