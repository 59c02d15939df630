import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

/** Waits until the locator is visible (fails with the locator's description after the timeout). */
export async function expectVisible(locator: Locator, timeout = 15_000): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout });
}

/** Waits until the locator matches nothing visible. */
export async function expectHidden(locator: Locator, timeout = 15_000): Promise<void> {
  await locator.first().waitFor({ state: 'hidden', timeout });
}

/** The id of the element that has the keyboard focus ('' when it has none). */
export async function focusedElementId(page: Page): Promise<string> {
  return page.evaluate('document.activeElement ? document.activeElement.id : ""') as Promise<string>;
}

/** Fails when the page had an uncaught error or logged a console error (other than the ones `allowed` matches). */
export function assertNoPageErrors(errors: string[], allowed: RegExp[] = []): void {
  const unexpected = errors.filter((e) => !allowed.some((a) => a.test(e)));
  assert.deepEqual(unexpected, [], 'the page logged errors');
}

/**
 * Waits until the page's document.title is `title` (the app sets it once the screen has rendered).
 * Polled from here: a string run in the page by waitForFunction is refused by the app's Content
 * Security Policy (no 'unsafe-eval') whenever it has to poll, which failed the wait at random.
 */
export async function expectTitle(page: Page, title: string, timeout = 15_000): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const current = await page.title();
    if (current === title) return;
    if (Date.now() > deadline) throw new Error(`the title is "${current}", not "${title}"`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the form control's value is `value` (it may be set by an effect after the screen renders). */
export async function expectValue(locator: Locator, value: string, timeout = 15_000): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const current = await locator.inputValue();
    if (current === value) return;
    if (Date.now() > deadline) throw new Error(`the value is "${current}", not "${value}"`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
