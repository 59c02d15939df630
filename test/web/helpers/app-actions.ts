import type { Page } from 'playwright-core';
import { saveScreenshot } from './chromium.js';
import { expectVisible } from './expect.js';

/** Signs in through the sign-in form and waits for the signed-in page (a failure saves a screenshot and says what the page showed). */
export async function signInThroughForm(page: Page, email: string, password: string): Promise<void> {
  try {
    await page.goto('/');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectVisible(page.getByRole('button', { name: 'Sign out' }));
  } catch (err) {
    await saveScreenshot(page, 'sign-in-failed');
    const shown = await page.locator('body').innerText().catch(() => '(no page)');
    throw new Error(`signing in failed at ${page.url()}, the page showing: ${shown.slice(0, 500)}`, { cause: err });
  }
}

/** Types a search and sends it with the keyboard, once the previous run has ended (its Search button is back). */
export async function search(page: Page, query: string): Promise<void> {
  await expectVisible(page.getByRole('button', { name: 'Search', exact: true }));
  const box = page.getByRole('searchbox', { name: 'Search' });
  await box.fill(query);
  await box.press('Enter');
}

/** The output of the conversation's turns (the live region). */
export function transcript(page: Page) {
  return page.getByRole('log', { name: 'Agent output' });
}
