import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, publishAgent, strongPassword, uniqueAgentName } from '../helpers/fixtures.js';
import { search, signInThroughForm, transcript } from './helpers/app-actions.js';
import { openPage, saveFailureScreenshot, phoneViewport, saveScreenshot, type WebPage } from './helpers/chromium.js';
import { assertNoPageErrors, expectHidden, expectVisible } from './helpers/expect.js';
import { startWebSuite, type WebSuite } from './helpers/web-suite.js';

/**
 * Chromium reports each inline handler it meets while the sanitizer parses agent markup (in an inert
 * document, where nothing runs) as a policy violation. Those reports are expected; a handler that ran
 * would set window.pwned, which the tests check.
 */
const sanitizerParsedHandler = /Executing inline event handler violates the following Content Security Policy/;

describe('web app: the search box', function () {
  this.timeout(60_000);
  let suite: WebSuite;
  let web: WebPage;

  before(async () => {
    suite = await startWebSuite();
  });
  after(() => suite?.close());
  afterEach(async function () {
    await saveFailureScreenshot(this.currentTest, web?.page);
    await web?.close();
  });

  async function signedInPage(options: { phone?: boolean } = {}): Promise<WebPage> {
    const password = strongPassword();
    const user = await createUser(suite.stack.runtime.db, { password });
    web = await openPage(suite.browser, suite.stack.url, options);
    await signInThroughForm(web.page, user.email, password);
    return web;
  }

  it('streams the answer: the first words are visible while the run is still going', async () => {
    const { page } = await signedInPage();
    await search(page, 'stream');
    await expectVisible(transcript(page).getByText('First words arrive'));
    // The agent sleeps before its second write: the run is visibly still going.
    assert.equal(await transcript(page).getByText('the rest comes later').count(), 0);
    await expectVisible(page.getByRole('button', { name: 'Stop' }));
    await saveScreenshot(page, 'search-streaming');
    await expectVisible(transcript(page).getByText('First words arrive, and the rest comes later.'));
    await expectVisible(page.getByRole('button', { name: 'Search' }));
    await expectHidden(page.getByRole('button', { name: 'Stop' }));
    assertNoPageErrors(web.errors);
  });

  it('lets the user pick the agent when more than one is published', async () => {
    const picked = uniqueAgentName('picked');
    await publishAgent(suite.stack.runtime.db, picked, `export default async (sys) => { sys.say('The picked agent answers ' + sys.query); }`);
    const { page } = await signedInPage();
    const select = page.getByLabel('Agent', { exact: true });
    await expectVisible(select);
    assert.equal(await select.inputValue(), suite.agentName, 'the default agent comes first');
    await select.selectOption(picked);
    await search(page, 'hi');
    await expectVisible(transcript(page).getByText('The picked agent answers hi'));
    await saveScreenshot(page, 'search-agent-picked');
    assertNoPageErrors(web.errors);
  });

  it('Stop cancels the run and says it was stopped', async () => {
    const { page } = await signedInPage();
    await search(page, 'slow');
    await expectVisible(transcript(page).getByText('Working on it'));
    const stoppedAt = Date.now();
    await page.getByRole('button', { name: 'Stop' }).click();
    await expectVisible(transcript(page).locator('[data-code="stopped"]').getByText('Stopped. Nothing of this run was kept.'));
    assert.ok(Date.now() - stoppedAt < 4000, 'stopped, not timed out');
    await expectVisible(page.getByRole('button', { name: 'Search' }));
    await saveScreenshot(page, 'search-stopped');
    assertNoPageErrors(web.errors);
  });

  it('shows Markdown, sanitized html and images, and no script the agent sent runs', async () => {
    const { page } = await signedInPage();
    await search(page, 'rich');
    const output = transcript(page);
    await expectVisible(output.locator('#agent-html'));
    await expectVisible(output.locator('.part-text strong').getByText('bold'));
    await expectVisible(output.getByRole('link', { name: 'link' }));
    const image = output.getByRole('img', { name: 'Image from the agent' });
    await expectVisible(image);
    assert.equal(await image.evaluate((img: any) => img.complete && img.naturalWidth), 1, 'the image part loaded');
    assert.equal(await output.locator('script').count(), 0);
    assert.equal(await output.locator('[onerror], [onmouseover]').count(), 0);
    assert.equal(await output.locator('#agent-link').getAttribute('href'), null, 'the javascript: URL is gone');
    await output.getByText('hover').hover();
    await output.locator('#agent-link').click();
    assert.equal(await page.evaluate('typeof window.pwned'), 'undefined', 'no handler of the agent ran');
    await saveScreenshot(page, 'search-rich-output');
    assertNoPageErrors(web.errors, [sanitizerParsedHandler]);
  });

  it('says what an ending means: the agent failed, or the conversation is unknown', async () => {
    const { page } = await signedInPage();
    await search(page, 'fail');
    const failed = transcript(page).locator('[data-code="failCommand"]');
    await expectVisible(failed.getByText('The agent stopped with an error.'));
    await expectVisible(failed.getByText('The widget is broken.'));

    await page.goto(`/c/${randomUUID()}`);
    await search(page, 'hello');
    await expectVisible(transcript(page).locator('[data-code="unknownConversation"]').getByText('This conversation is unknown or has expired'));
    await saveScreenshot(page, 'search-result-messages');
    assertNoPageErrors(web.errors);
  });

  it('follow-up searches continue the conversation; New conversation starts another', async () => {
    const { page } = await signedInPage();
    await search(page, 'first');
    await expectVisible(transcript(page).getByText('(search 1 here)'));
    assert.match(new URL(page.url()).pathname, /^\/c\/[0-9a-f-]{36}$/);
    await search(page, 'second');
    await expectVisible(transcript(page).getByText('(search 2 here)'));
    await page.getByRole('button', { name: 'New conversation' }).click();
    assert.equal(new URL(page.url()).pathname, '/');
    await search(page, 'third');
    await expectVisible(transcript(page).getByText('(search 1 here)'));
    assertNoPageErrors(web.errors);
  });

  it('works on a phone-sized screen: nothing wider than the screen, controls reachable', async () => {
    // An agent name as long as names go: the picker lists it, and must still fit the screen.
    await publishAgent(suite.stack.runtime.db, uniqueAgentName('a-name-as-long-as-agent-names-may-be-in-agentexec'), `export default async (sys) => sys.say('long')`);
    const { page } = await signedInPage({ phone: true });
    await search(page, 'rich');
    await expectVisible(transcript(page).locator('#agent-html'));
    await search(page, 'form');
    await expectVisible(page.getByRole('button', { name: 'Send answers' }));
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(width <= phoneViewport.width, `the page is ${width}px wide`);
    for (const control of [page.getByRole('searchbox', { name: 'Search' }), page.getByRole('button', { name: 'Sign out' }), page.getByRole('button', { name: 'Send answers' })]) {
      const box = await control.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= phoneViewport.width, 'within the screen');
    }
    await saveScreenshot(page, 'phone-search-ask');
    assertNoPageErrors(web.errors, [sanitizerParsedHandler]);
  });
});
