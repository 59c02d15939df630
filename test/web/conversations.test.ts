import assert from 'node:assert/strict';
import { createUser, strongPassword } from '../helpers/fixtures.js';
import { search, signInThroughForm, transcript } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectVisible } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

describe('web app: conversations', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  let user: { id: string; email: string };
  let password: string;
  const pages: WebPage[] = [];

  before(async () => {
    suite = await startWebSuite();
  });
  after(() => suite?.close());
  beforeEach(async () => {
    password = strongPassword();
    user = await createUser(suite.stack.runtime.db, { password });
  });
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, pages[pages.length - 1]?.page);
    for (const web of pages.splice(0)) await web.close();
  });

  async function signedInPage(): Promise<WebPage> {
    const web = await openPage(suite.browser, suite.stack.url);
    pages.push(web);
    await signInThroughForm(web.page, user.email, password);
    return web;
  }

  const pinnedInDb = async (convid: string) =>
    (await suite.stack.runtime.db.selectFrom('conversations').select('pinned').where('id', '=', convid).executeTakeFirstOrThrow()).pinned;

  it('lists the conversations, pins and unpins one, and opens one to continue it', async () => {
    const { page, errors } = await signedInPage();
    await search(page, 'alpha');
    await expectVisible(transcript(page).getByText('You searched for alpha'));
    const alpha = new URL(page.url()).pathname.slice('/c/'.length);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await search(page, 'beta');
    await expectVisible(transcript(page).getByText('You searched for beta'));

    await page.getByRole('link', { name: 'Conversations' }).click();
    const items = page.locator('li.conversation');
    await expectVisible(items.first());
    assert.deepEqual(await items.locator('.conversation-open').allInnerTexts(), ['beta', 'alpha'], 'most recent first');

    await page.getByRole('button', { name: 'Pin “alpha”', exact: true }).click();
    await expectVisible(page.getByRole('button', { name: 'Unpin “alpha”', exact: true }));
    assert.equal(await pinnedInDb(alpha), true);
    await page.reload();
    await expectVisible(page.getByRole('button', { name: 'Unpin “alpha”', exact: true }));
    await expectVisible(items.filter({ hasText: 'alpha' }).getByText('pinned, kept until unpinned'));
    await saveScreenshot(page, 'conversations-pinned');
    await page.getByRole('button', { name: 'Unpin “alpha”', exact: true }).click();
    await expectVisible(page.getByRole('button', { name: 'Pin “alpha”', exact: true }));
    assert.equal(await pinnedInDb(alpha), false);

    await page.getByRole('link', { name: 'alpha', exact: true }).click();
    assert.equal(new URL(page.url()).pathname, `/c/${alpha}`);
    await search(page, 'gamma');
    await expectVisible(transcript(page).getByText('You searched for gamma (search 2 here).'));
    assertNoPageErrors(errors);
  });

  it('shows a conversation opened on another page as its whole transcript, read back from the server', async () => {
    const first = await signedInPage();
    await search(first.page, 'alpha');
    await expectVisible(transcript(first.page).getByText('(search 1 here)'));
    await search(first.page, 'beta');
    await expectVisible(transcript(first.page).getByText('(search 2 here)'));
    const address = new URL(first.page.url()).pathname;

    const { page, errors } = await signedInPage();
    await page.goto(address);
    const shown = transcript(page);
    await expectVisible(shown.getByText('You searched for alpha (search 1 here).'));
    await expectVisible(shown.getByText('You searched for beta (search 2 here).'));
    assert.deepEqual(await shown.locator('.turn-sent').allInnerTexts(), ['alpha', 'beta'], 'each turn with the query that started it, in order');
    await saveScreenshot(page, 'conversation-transcript');
    await search(page, 'gamma');
    await expectVisible(shown.getByText('You searched for gamma (search 3 here).'));
    assertNoPageErrors(errors);
  });

  it('a conversation paused on an ask, opened on another page, shows the ask again and continues', async () => {
    const first = await signedInPage();
    await search(first.page, 'size');
    await expectVisible(first.page.getByRole('form', { name: 'Which size?' }));

    const { page, errors } = await signedInPage();
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('link', { name: 'size', exact: true }).click();
    const form = page.getByRole('form', { name: 'Which size?' });
    await expectVisible(form);
    await form.getByRole('radio', { name: 'small' }).check();
    await form.getByRole('button', { name: 'Send answers' }).click();
    await expectVisible(transcript(page).getByText('Size small it is.'));
    await saveScreenshot(page, 'conversation-continued');
    // Answered, its last call has no query: it is still listed by the query that started it.
    await page.getByRole('link', { name: 'Conversations' }).click();
    await expectVisible(page.getByRole('link', { name: 'size', exact: true }));
    await saveScreenshot(page, 'conversations-titled');
    assertNoPageErrors(errors);
  });
});
