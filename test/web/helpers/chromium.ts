import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** The system's Chromium (installed by the distribution's package, never downloaded by the tests). */
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** One headless Chromium for a suite. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface WebPage {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page's scripts and console errors (other than HTTP statuses, which some tests cause on purpose). */
  errors: string[];
  close(): Promise<void>;
}

export const phoneViewport = { width: 390, height: 844 };

/** A fresh context (no cookies) with one page on `baseUrl`; phone-sized when asked. */
export async function openPage(browser: Browser, baseUrl: string, options: { phone?: boolean } = {}): Promise<WebPage> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: options.phone ? phoneViewport : { width: 1200, height: 900 },
    ...(options.phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  // Generous: the machine running the suite may be busy with other work.
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`console: ${message.text()}`);
  });
  return { context, page, errors, close: () => context.close() };
}

/** Where screenshots go: SCREENSHOT_DIR, or test-results/screenshots. */
const screenshotDir = process.env.SCREENSHOT_DIR ?? 'test-results/screenshots';

/** Saves a full-page screenshot as <SCREENSHOT_DIR>/<name>.png. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  await page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });
}

/** After a failed test: a screenshot of where the page was, named after the test. */
export async function saveFailureScreenshot(test: Mocha.Test | undefined, page: Page | undefined): Promise<void> {
  if (test?.state !== 'failed' || !page || page.isClosed()) return;
  await saveScreenshot(page, `failed-${test.title.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60)}`).catch(() => undefined);
}
