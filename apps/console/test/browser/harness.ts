import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where the suite writes its screenshots (git-ignored; looked at after each run). */
export const SCREENSHOT_DIR = join(__dirname, '..', '..', 'test-results', 'screenshots');

/**
 * Debian's Chromium, headless, with a fresh profile. The background-networking flags matter on a
 * closed network: without them Chromium keeps trying to reach its update and sync services.
 */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const WIDE = { width: 1280, height: 900 };
export const NARROW = { width: 390, height: 844 };

/** What went wrong in the page: console errors and uncaught exceptions. */
export interface PageProblems {
  list: string[];
}

export interface Browser {
  context: BrowserContext;
  /** A new tab (its own sessionStorage, so its own sign-in) whose console errors are recorded. */
  newPage(): Promise<{ page: Page; problems: PageProblems }>;
  /** Declares a refusal the next steps provoke on purpose: the browser logs such responses as errors. */
  expectRefusal(status: number, url: RegExp): void;
  clearExpectedRefusals(): void;
  close(): Promise<void>;
}

const RESOURCE_ERROR = /^Failed to load resource: the server responded with a status of (\d+)/;

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: WIDE,
    acceptDownloads: true,
  });
  let expected: { status: number; url: RegExp }[] = [];
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const problems: PageProblems = { list: [] };
      page.on('console', (msg) => {
        if (msg.type() !== 'error') return;
        const text = msg.text();
        const m = RESOURCE_ERROR.exec(text);
        const url = msg.location().url;
        // A refused request the test provoked on purpose is logged by Chromium itself; anything else fails.
        if (m && expected.some((e) => e.status === Number(m[1]) && e.url.test(url))) return;
        problems.list.push(`console.error: ${text} (${url})`);
      });
      page.on('pageerror', (e) => problems.list.push(`page error: ${e.message}`));
      return { page, problems };
    },
    expectRefusal(status, url) {
      expected.push({ status, url });
    },
    clearExpectedRefusals() {
      expected = [];
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Full-page screenshots of the current page at both widths (then back to the wide one). */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const [size, label] of [
    [WIDE, '1280'],
    [NARROW, '390'],
  ] as const) {
    await page.setViewportSize(size);
    // Let layout (and the terminal's fit) settle at the new width.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDE);
}
