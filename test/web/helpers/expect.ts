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
